/**
 * Policies, the policy gate, consensus and votes, through @turnkey/http's TurnkeyClient (unmodified)
 * against the real service over HTTP on SQLite. The handler is built here rather than through
 * startEmbedded so its clock can be moved forward (vote expiry); everything else is the real code.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { recoverTransactionAddress, serializeTransaction, type Hex } from 'viem';
import { openEmbeddedService } from '../src/service/embedded.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import type { Store } from '../src/service/store/types.js';
import { KeyVault, loadOrCreateMasterKey } from '../src/service/keys/index.js';
import { createApiHandler } from '../src/service/api/handler.js';
import { Metrics } from '../src/service/api/metrics.js';
import { startHttpServer, type HttpListener } from '../src/service/api/http-server.js';
import { insertUserWithApiKey } from './helpers/users.js';

const HOUR = 60 * 60 * 1000;
const A = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const B = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const C = '0x90f79bf6eb2c4f870365e785982e1f101e93b906';
const D = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';
const TOKEN = '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc';

let dataDir: string;
let store: Store;
let http: HttpListener;
let clockOffsetMs = 0;
let orgId: string;
let otherOrgId: string;
let signWith: Hex;
const users: Record<'root' | 'alice' | 'bob' | 'carol' | 'dave', { id: string; client: TurnkeyClient }> =
  {} as never;

function clientFor(key: { apiPublicKey: string; apiPrivateKey: string }): TurnkeyClient {
  return new TurnkeyClient({ baseUrl: `http://${http.address}` }, new ApiKeyStamper(key));
}

/**
 * There is no create_users activity yet, so the non-root users (and a second organization) are
 * inserted directly through the store's write(), the same transaction path activities use.
 */
async function insertUser(
  organizationId: string,
  name: string,
): Promise<{ id: string; client: TurnkeyClient }> {
  const { userId: id, key } = await insertUserWithApiKey(store, { organizationId, name });
  return { id, client: clientFor(key) };
}

const ts = () => String(Date.now() + clockOffsetMs);

function unsignedTx(opts: { to: string; chainId?: number; nonce?: number; data?: Hex }): string {
  return serializeTransaction({
    type: 'eip1559',
    chainId: opts.chainId ?? 11155111,
    nonce: opts.nonce ?? 0,
    to: opts.to as Hex,
    value: 1000n,
    gas: 60000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    ...(opts.data === undefined ? {} : { data: opts.data }),
  }).slice(2);
}

function sign(who: keyof typeof users, unsignedTransaction: string) {
  return users[who].client.signTransaction({
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    timestampMs: ts(),
    organizationId: orgId,
    parameters: { signWith, unsignedTransaction, type: 'TRANSACTION_TYPE_ETHEREUM' },
  });
}

function createPolicy(p: {
  policyName: string;
  effect: 'EFFECT_ALLOW' | 'EFFECT_DENY';
  condition?: string;
  consensus?: string;
}) {
  return users.root.client.createPolicy({
    type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
    timestampMs: ts(),
    organizationId: orgId,
    parameters: { notes: '', ...p },
  });
}

function vote(who: keyof typeof users, fingerprint: string, approve = true, organizationId = orgId) {
  const body = { timestampMs: ts(), organizationId, parameters: { fingerprint } };
  return approve
    ? users[who].client.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', ...body })
    : users[who].client.rejectActivity({ type: 'ACTIVITY_TYPE_REJECT_ACTIVITY', ...body });
}

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

const ERC20_TRANSFER: Hex = `0xa9059cbb${'0'.repeat(24)}${A.slice(2)}${'0'.repeat(63)}1`;

async function recovered(signedTransaction: string): Promise<string> {
  return (
    await recoverTransactionAddress({ serializedTransaction: `0x${signedTransaction}` as never })
  ).toLowerCase();
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'countersign-policies-'));
  const logger = pino({ level: 'silent' });
  // Initialize the data dir the usual way, then reopen it with a handler whose clock we control.
  const svc = await openEmbeddedService({ dataDir, logger });
  const creds = svc.credentials;
  await svc.close();
  const masterKey = loadOrCreateMasterKey({ dataDir });
  const vault = new KeyVault(masterKey);
  masterKey.fill(0);
  store = openSqliteStore(join(dataDir, 'countersign.db'));
  const handler = createApiHandler({
    store,
    vault,
    logger,
    metrics: new Metrics(),
    // Wide windows: the clock is moved a day ahead while the client stamps with the real time.
    maxRequestAgeMs: 100 * HOUR,
    maxClockSkewMs: 100 * HOUR,
    now: () => Date.now() + clockOffsetMs,
  });
  http = await startHttpServer({ host: '127.0.0.1', port: 0, handler, metrics: () => '', logger });
  orgId = creds.organizationId;
  const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  signWith = eth?.address as Hex;
  users.root = {
    id: creds.userId,
    client: clientFor({ apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey }),
  };
  users.alice = await insertUser(orgId, 'alice');
  users.bob = await insertUser(orgId, 'bob');
  users.carol = await insertUser(orgId, 'carol');
  otherOrgId = randomUUID();
  await store.write((tx) =>
    tx.insertOrganization({
      id: otherOrgId,
      name: 'Other Organization',
      parentId: null,
      rootQuorumThreshold: 1,
      createdAtMs: Date.now(),
    }),
  );
  users.dave = await insertUser(otherOrgId, 'dave');
});

afterAll(async () => {
  await http.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('policies and the policy gate', () => {
  it('denies a non-root user implicitly when no policy applies, and records nothing', async () => {
    const before = (await store.listActivities(orgId, { limit: 100 })).length;
    const e = await refusal(sign('alice', unsignedTx({ to: A })));
    expect(e.code).toBe(7);
    expect(e.message).toContain('policy engine denied request implicitly');
    expect((await store.listActivities(orgId, { limit: 100 })).length).toBe(before);
  });

  it('refuses an invalid expression at create_policy naming the field and position, creating nothing', async () => {
    const e = await refusal(
      createPolicy({ policyName: 'bad', effect: 'EFFECT_ALLOW', condition: 'eth.tx.to == ' }),
    );
    expect(e.code).toBe(3);
    expect(e.message).toMatch(/parameters\.condition/);
    expect(e.message).toMatch(/line 1/);
    expect(e.message).toMatch(/column \d+/);
    const list = await users.root.client.getPolicies({ organizationId: orgId });
    expect(list.policies).toEqual([]);
  });

  it('allows only the named user to sign to one address (8.4), and refuses a duplicate name', async () => {
    const r = await createPolicy({
      policyName: 'alice to A',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${users.alice.id}')`,
      condition: `eth.tx.to == '${A}'`,
    });
    expect(r.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const policyId = r.activity.result.createPolicyResult?.policyId as string;
    const got = await users.root.client.getPolicy({ organizationId: orgId, policyId });
    expect(got.policy).toMatchObject({
      policyId,
      policyName: 'alice to A',
      effect: 'EFFECT_ALLOW',
      condition: `eth.tx.to == '${A}'`,
      notes: '',
    });

    const ok = await sign('alice', unsignedTx({ to: A }));
    expect(ok.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const signed = ok.activity.result.signTransactionResult?.signedTransaction as string;
    expect(await recovered(signed)).toBe(signWith.toLowerCase());
    const evals = await users.alice.client.getPolicyEvaluations({
      organizationId: orgId,
      activityId: ok.activity.id,
    });
    expect(evals.policyEvaluations[0]?.policyEvaluations).toEqual([{ policyId, outcome: 'OUTCOME_ALLOW' }]);

    const denied = await refusal(sign('alice', unsignedTx({ to: B })));
    expect(denied.code).toBe(7);
    expect(denied.message).toContain('implicitly');

    const dup = await refusal(createPolicy({ policyName: 'alice to A', effect: 'EFFECT_DENY' }));
    expect(dup.code).toBe(3);
    expect(dup.message).toContain('policy label must be unique');
    expect((await users.root.client.getPolicies({ organizationId: orgId })).policies).toHaveLength(1);
  });

  it('lets an explicit DENY beat an ALLOW, and deleting it lifts the deny', async () => {
    const r = await createPolicy({
      policyName: 'no ERC-20 transfers',
      effect: 'EFFECT_DENY',
      condition: "eth.tx.data[0..10] == '0xa9059cbb'",
    });
    const denyId = r.activity.result.createPolicyResult?.policyId as string;
    const e = await refusal(sign('alice', unsignedTx({ to: A, data: ERC20_TRANSFER })));
    expect(e.code).toBe(7);
    expect(e.message).toContain('policy engine denied request explicitly');

    const del = await users.root.client.deletePolicy({
      type: 'ACTIVITY_TYPE_DELETE_POLICY',
      timestampMs: ts(),
      organizationId: orgId,
      parameters: { policyId: denyId },
    });
    expect(del.activity.result.deletePolicyResult?.policyId).toBe(denyId);
    const ok = await sign('alice', unsignedTx({ to: A, data: ERC20_TRANSFER, nonce: 1 }));
    expect(ok.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    const gone = await refusal(
      users.root.client.deletePolicy({
        type: 'ACTIVITY_TYPE_DELETE_POLICY',
        timestampMs: ts(),
        organizationId: orgId,
        parameters: { policyId: denyId },
      }),
    );
    expect(gone.code).toBe(5);
  });

  it('allows testnet only (chain_id) and an ERC-20 call to one token, and updates a policy', async () => {
    const r = await createPolicy({
      policyName: 'carol testnet',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${users.carol.id}')`,
      condition: `eth.tx.chain_id == 11155111 && eth.tx.to == '${C}'`,
    });
    const id = r.activity.result.createPolicyResult?.policyId as string;
    expect((await sign('carol', unsignedTx({ to: C }))).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await refusal(sign('carol', unsignedTx({ to: C, chainId: 1 })))).code).toBe(7);

    const up = await users.root.client.updatePolicy({
      type: 'ACTIVITY_TYPE_UPDATE_POLICY_V2',
      timestampMs: ts(),
      organizationId: orgId,
      parameters: {
        policyId: id,
        policyName: 'carol token',
        policyCondition: `eth.tx.to == '${TOKEN}' && eth.tx.data[0..10] == '0xa9059cbb'`,
      },
    });
    expect(up.activity.result.updatePolicyResultV2?.policyId).toBe(id);
    expect(
      (await users.root.client.getPolicy({ organizationId: orgId, policyId: id })).policy.policyName,
    ).toBe('carol token');
    const ok = await sign('carol', unsignedTx({ to: TOKEN, data: ERC20_TRANSFER, chainId: 1 }));
    expect(ok.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await refusal(sign('carol', unsignedTx({ to: TOKEN, nonce: 5 })))).code).toBe(7);
  });
});

describe('consensus', () => {
  beforeAll(async () => {
    await createPolicy({
      policyName: 'two of three to D',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.filter(u, u.id in ['${users.alice.id}', '${users.bob.id}', '${users.carol.id}']).count() >= 2`,
      condition: `eth.tx.to == '${D}'`,
    });
  });

  it('needs a second approval, then runs the stored request and returns a signature that verifies', async () => {
    const r = await sign('alice', unsignedTx({ to: D, nonce: 10 }));
    const a = r.activity;
    expect(a.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(a.canApprove).toBe(true);
    expect(a.canReject).toBe(true);
    expect(a.result.signTransactionResult).toBeUndefined();
    expect(a.votes).toHaveLength(1);
    expect(a.votes[0]?.userId).toBe(users.alice.id);
    expect(a.votes[0]?.selection).toBe('VOTE_SELECTION_APPROVED');

    const done = await vote('bob', a.fingerprint);
    expect(done.activity.id).toBe(a.id);
    expect(done.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.activity.votes.map((v) => v.userId)).toEqual([users.alice.id, users.bob.id]);
    expect(JSON.parse(done.activity.votes[1]?.message as string).parameters.fingerprint).toBe(a.fingerprint);
    const signed = (done.activity.result as { signTransactionResult?: { signedTransaction: string } })
      .signTransactionResult?.signedTransaction as string;
    expect(await recovered(signed)).toBe(signWith.toLowerCase());

    const evals = await users.root.client.getPolicyEvaluations({ organizationId: orgId, activityId: a.id });
    expect(evals.policyEvaluations.map((e) => (e as { outcome?: string }).outcome)).toEqual([
      'OUTCOME_REQUIRES_CONSENSUS',
      'OUTCOME_ALLOW',
    ]);
    expect(evals.policyEvaluations[1]?.voteId).toBe(done.activity.votes[1]?.id);
  });

  it('ends the activity REJECTED on a reject, after which it takes no approval', async () => {
    const a = (await sign('alice', unsignedTx({ to: D, nonce: 11 }))).activity;
    const rejected = await vote('carol', a.fingerprint, false);
    expect(rejected.activity.status).toBe('ACTIVITY_STATUS_REJECTED');
    expect(rejected.activity.canApprove).toBe(false);
    expect((await refusal(vote('bob', a.fingerprint))).code).toBe(3);
    const got = await users.root.client.getActivity({ organizationId: orgId, activityId: a.id });
    expect(got.activity.status).toBe('ACTIVITY_STATUS_REJECTED');
  });

  it('refuses an approval from another organization and an unknown fingerprint', async () => {
    const a = (await sign('alice', unsignedTx({ to: D, nonce: 12 }))).activity;
    const e = await refusal(vote('dave', a.fingerprint, true, otherOrgId));
    expect(e.code).toBe(3);
    expect(e.message).toContain('organization mismatch');
    expect(JSON.stringify(e.details)).toContain('ORGANIZATION_MISMATCH');
    const missing = await refusal(vote('bob', `sha256:${'0'.repeat(64)}`));
    expect(missing.code).toBe(5);
    expect(missing.message).toContain('No activity found with fingerprint');
    const still = await users.root.client.getActivity({ organizationId: orgId, activityId: a.id });
    expect(still.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
  });

  it('no longer counts votes older than 24 hours', async () => {
    const a = (await sign('alice', unsignedTx({ to: D, nonce: 13 }))).activity;
    clockOffsetMs = 25 * HOUR;
    try {
      const afterBob = await vote('bob', a.fingerprint);
      expect(afterBob.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
      const afterCarol = await vote('carol', a.fingerprint);
      expect(afterCarol.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    } finally {
      clockOffsetMs = 0;
    }
  });
});
