/**
 * The policy dry run over real parts: the embedded service behind its HTTP listener (queried
 * directly with stamped bodies) and real gRPC daemons wired to it with the in-process transport,
 * one stamping as a non-root user and one as the root user. EvaluatePolicies must answer what
 * SignTransaction / SignRawPayloads would meet at the policy gate, and leave no trace: no activity,
 * no vote, no evaluation record, no signature.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { pino } from 'pino';
import { getAddress, keccak256, serializeTransaction, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER, ERROR_FIELD_TRAILER } from '../src/daemon/grpc-status.js';
import type { EvaluatePoliciesResponse } from '../src/daemon/proto.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { openSignerStub, type RpcError, type UnaryMethod } from './helpers/grpc-client.js';
import { post } from './helpers/http.js';
import type { ApiKeyPair } from './helpers/api-key.js';
import { insertUserWithApiKey } from './helpers/users.js';

const CHAIN_ID = '11155111';
/** Allowed for everyone. */
const A = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
/** No policy names it: implicitly denied. */
const B = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
/** Explicitly denied. */
const C = '0x90f79bf6eb2c4f870365e785982e1f101e93b906';
/** Allowed with two of alice, bob and carol. */
const D = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';

let h: EmbeddedHarness;
let org: string;
let account: Address;
let transport: Transport;
const daemons: RunningDaemon[] = [];
const clients: DryRunClient[] = [];
let asAlice: DryRunClient;
let asRoot: DryRunClient;
let alice: { id: string; key: ApiKeyPair };
const policyIds = {} as Record<'allowA' | 'denyC' | 'consensusD', string>;

/** Non-root users go in through the store's write(), the transaction path activities use. */
async function insertUser(name: string): Promise<{ id: string; key: ApiKeyPair }> {
  const { userId: id, key } = await insertUserWithApiKey(h.service.store, { organizationId: org, name });
  return { id, key };
}

type Result = { ok: true; res: EvaluatePoliciesResponse } | { ok: false; err: RpcError };

interface DryRunClient {
  evaluate(req: Record<string, unknown>): Promise<Result>;
  close(): void;
}

function createDryRunClient(address: string): DryRunClient {
  const client = openSignerStub<{ EvaluatePolicies: UnaryMethod<EvaluatePoliciesResponse> }>(address);
  return {
    evaluate: (req) =>
      new Promise((resolve) => {
        client.EvaluatePolicies(req, new grpc.Metadata(), { deadline: Date.now() + 30_000 }, (err, res) => {
          if (err !== null || res === undefined)
            resolve({
              ok: false,
              err: {
                code: err?.code ?? grpc.status.UNKNOWN,
                details: err?.details ?? '',
                metadata: err?.metadata ?? new grpc.Metadata(),
              },
            });
          else resolve({ ok: true, res });
        });
      }),
    close: () => client.close(),
  };
}

async function evaluateOk(
  client: DryRunClient,
  req: Record<string, unknown>,
): Promise<EvaluatePoliciesResponse> {
  const r = await client.evaluate(req);
  if (!r.ok)
    throw new Error(
      `EvaluatePolicies failed: ${r.err.code} ${r.err.details} (${r.err.metadata.get(ERROR_CODE_TRAILER)})`,
    );
  return r.res;
}

async function daemonStampingAs(key: ApiKeyPair, name: string): Promise<DryRunClient> {
  const daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client: new PublicApiClient({ transport, stamper: new ApiKeyStamper(key), organizationId: org }),
    defaultOrganizationId: org,
    idempotencyDbPath: join(h.dataDir, `daemon-${name}.db`),
    logger: pino({ level: 'silent' }),
    drainTimeoutMs: 500,
  });
  daemons.push(daemon);
  const client = createDryRunClient(daemon.address);
  clients.push(client);
  return client;
}

function ethereumTx(to: string) {
  return {
    chainId: CHAIN_ID,
    nonce: '0',
    to,
    value: '1000',
    gasLimit: '60000',
    maxFeePerGas: '2000000000',
    maxPriorityFeePerGas: '1000000000',
  };
}

const signTransactionTo = (to: string, mode = 'SIGNING_MODE_SIGN_TRANSACTION') => ({
  signTransaction: { signWith: account, mode, ethereum: ethereumTx(to) },
});

function unsignedHex(to: string): string {
  return serializeTransaction({
    type: 'eip1559',
    chainId: Number(CHAIN_ID),
    nonce: 0,
    to: to as Hex,
    value: 1000n,
    gas: 60000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  }).slice(2);
}

/** The evaluate_policies query over HTTP, stamped with `key`. */
function query(key: ApiKeyPair, activity: Record<string, unknown>) {
  return post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/query/evaluate_policies',
    JSON.stringify({ organizationId: org, activity }),
    { keys: key },
  );
}

/** Everything a run would leave behind: activities, their votes and evaluations. */
async function traces(): Promise<{ activities: string[]; votes: number; evaluations: number }> {
  const activities = await h.service.store.listActivities(org, { limit: 1000 });
  let votes = 0;
  let evaluations = 0;
  for (const a of activities) {
    votes += (await h.service.store.listVotes(a.id)).length;
    evaluations += (await h.service.store.listPolicyEvaluations(a.id)).length;
  }
  return { activities: activities.map((a) => `${a.id}:${a.status}`), votes, evaluations };
}

let before: Awaited<ReturnType<typeof traces>>;

beforeAll(async () => {
  h = await startEmbedded();
  const creds = h.service.credentials;
  org = creds.organizationId;
  account = getAddress(ethAddressOf(h));
  alice = await insertUser('alice');
  const bob = await insertUser('bob');
  const carol = await insertUser('carol');
  const root = new TurnkeyClient({ baseUrl: h.baseUrl }, new TurnkeyApiKeyStamper(creds));
  const consensus = `approvers.filter(u, u.id in ['${alice.id}', '${bob.id}', '${carol.id}']).count() >= 2`;
  for (const [name, policyName, effect, condition, withConsensus] of [
    ['allowA', 'allow A', 'EFFECT_ALLOW', `eth.tx.to == '${A}'`, false],
    ['denyC', 'deny C', 'EFFECT_DENY', `eth.tx.to == '${C}'`, false],
    ['consensusD', 'two of three to D', 'EFFECT_ALLOW', `eth.tx.to == '${D}'`, true],
  ] as const) {
    const r = await root.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        policyName,
        effect,
        condition,
        ...(withConsensus ? { consensus } : {}),
        notes: '',
      },
    });
    expect(r.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const id = (r.activity.result as { createPolicyResult?: { policyId?: string } }).createPolicyResult
      ?.policyId;
    if (id === undefined) throw new Error('create_policy returned no policyId');
    policyIds[name] = id;
  }
  transport = inProcessTransport(h.service.handler);
  asAlice = await daemonStampingAs(alice.key, 'alice');
  asRoot = await daemonStampingAs(
    { apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey },
    'root',
  );
  before = await traces();
});

afterAll(async () => {
  for (const c of clients) c.close();
  for (const d of daemons) await d.close();
  await transport?.close();
  await h?.close();
});

describe('EvaluatePolicies (daemon)', () => {
  it('answers OUTCOME_ALLOW for a non-root user sending to the allowed address', async () => {
    const res = await evaluateOk(asAlice, signTransactionTo(A));
    expect(res.outcome).toBe('OUTCOME_ALLOW');
    expect(res.rootQuorumReached).toBe(false);
    expect(res.activityType).toBe('ACTIVITY_TYPE_SIGN_TRANSACTION_V2');
    expect(res.organizationId).toBe(org);
    const byId = new Map(res.policyEvaluations.map((e) => [e.policyId, e.outcome]));
    expect(byId.get(policyIds.allowA)).toBe('OUTCOME_ALLOW');
    expect(byId.get(policyIds.denyC)).toBe('OUTCOME_DENY_IMPLICIT');
    expect(byId.get(policyIds.consensusD)).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('answers OUTCOME_DENY_IMPLICIT where no policy applies', async () => {
    const res = await evaluateOk(asAlice, signTransactionTo(B));
    expect(res.outcome).toBe('OUTCOME_DENY_IMPLICIT');
    expect(res.policyEvaluations.every((e) => e.outcome === 'OUTCOME_DENY_IMPLICIT')).toBe(true);
  });

  it('answers OUTCOME_DENY_EXPLICIT where a DENY policy applies', async () => {
    const res = await evaluateOk(asAlice, signTransactionTo(C));
    expect(res.outcome).toBe('OUTCOME_DENY_EXPLICIT');
    expect(res.policyEvaluations.find((e) => e.policyId === policyIds.denyC)?.outcome).toBe(
      'OUTCOME_DENY_EXPLICIT',
    );
  });

  it('answers OUTCOME_REQUIRES_CONSENSUS under a 2-of-3 policy with one approver', async () => {
    const res = await evaluateOk(asAlice, signTransactionTo(D));
    expect(res.outcome).toBe('OUTCOME_REQUIRES_CONSENSUS');
    expect(res.policyEvaluations.find((e) => e.policyId === policyIds.consensusD)?.outcome).toBe(
      'OUTCOME_REQUIRES_CONSENSUS',
    );
  });

  it('evaluates the raw-payload activity the SIGN_RAW_PAYLOADS mode would submit', async () => {
    const res = await evaluateOk(asAlice, signTransactionTo(A, 'SIGNING_MODE_SIGN_RAW_PAYLOADS'));
    // eth.tx is not known for a raw payload: the allow-to-A policy cannot apply to it.
    expect(res.activityType).toBe('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS');
    expect(res.outcome).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('evaluates SignRawPayloads requests too', async () => {
    const res = await evaluateOk(asAlice, {
      signRawPayloads: {
        signWith: account,
        payloads: [keccak256('0x1234').slice(2)],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
    });
    expect(res.activityType).toBe('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS');
    expect(res.outcome).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('answers OUTCOME_ALLOW with root_quorum_reached for the root user, even where a policy denies', async () => {
    for (const to of [B, C]) {
      const res = await evaluateOk(asRoot, signTransactionTo(to));
      expect(res.outcome).toBe('OUTCOME_ALLOW');
      expect(res.rootQuorumReached).toBe(true);
    }
  });

  it('refuses a malformed transaction with INVALID_ARGUMENT naming the field', async () => {
    const r = await asAlice.evaluate({
      signTransaction: { signWith: account, ethereum: { ...ethereumTx(A), to: '0x1234' } },
    });
    if (r.ok) throw new Error('expected INVALID_ARGUMENT, the call succeeded');
    expect(r.err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(r.err.metadata.get(ERROR_FIELD_TRAILER)).toEqual(['sign_transaction.ethereum.to']);
    expect(r.err.details).toMatch(/^sign_transaction\.ethereum\.to: /);

    const garbage = await asAlice.evaluate({
      signTransaction: { signWith: account, ethereum: { unsigned: new Uint8Array([0x02, 0xc0, 0xff]) } },
    });
    if (garbage.ok) throw new Error('expected INVALID_ARGUMENT, the call succeeded');
    expect(garbage.err.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('refuses a request without a member, and an unknown signer', async () => {
    const empty = await asAlice.evaluate({});
    if (empty.ok) throw new Error('expected INVALID_ARGUMENT, the call succeeded');
    expect(empty.err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(empty.err.metadata.get(ERROR_FIELD_TRAILER)).toEqual(['request']);

    const unknown = await asAlice.evaluate({
      signTransaction: { signWith: '0x000000000000000000000000000000000000dead', ethereum: ethereumTx(A) },
    });
    if (unknown.ok) throw new Error('expected a refusal, the call succeeded');
    // An address is its own expected signer: the service refuses it, as it refuses the submission.
    expect(unknown.err.details).toContain('activity.parameters.signWith');
  });
});

describe('evaluate_policies (service query over HTTP)', () => {
  const signTx = (to: string) => ({
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    parameters: {
      signWith: account,
      unsignedTransaction: unsignedHex(to),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    },
  });

  it('answers the decision and each policy outcome', async () => {
    const allowed = await query(alice.key, signTx(A));
    expect(allowed.status).toBe(200);
    expect(allowed.json).toMatchObject({ outcome: 'OUTCOME_ALLOW', rootQuorumReached: false });
    expect(allowed.json.policyEvaluations).toContainEqual({
      policyId: policyIds.allowA,
      outcome: 'OUTCOME_ALLOW',
    });
    const pending = await query(alice.key, signTx(D));
    expect(pending.json.outcome).toBe('OUTCOME_REQUIRES_CONSENSUS');
  });

  it('refuses a malformed transaction as the activity would, naming the field in the body', async () => {
    const bad = await query(alice.key, {
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      parameters: { signWith: account, unsignedTransaction: '02c0ff', type: 'TRANSACTION_TYPE_ETHEREUM' },
    });
    expect(bad.status).toBe(400);
    expect(String(bad.json.message)).toMatch(/^activity\.parameters\.unsignedTransaction: /);
  });

  it('refuses an unknown signWith, a missing activity and an activity type it does not evaluate', async () => {
    const unknown = await query(alice.key, {
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      parameters: {
        signWith: randomUUID(),
        unsignedTransaction: unsignedHex(A),
        type: 'TRANSACTION_TYPE_ETHEREUM',
      },
    });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(String(unknown.json.message)).toContain('activity.parameters.signWith');

    const none = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/evaluate_policies',
      JSON.stringify({ organizationId: org }),
      { keys: alice.key },
    );
    expect(none.status).toBe(400);
    expect(String(none.json.message)).toMatch(/^activity: /);

    const vote = await query(alice.key, {
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      parameters: { fingerprint: 'x' },
    });
    expect(vote.status).toBe(400);
    expect(String(vote.json.message)).toMatch(/^activity\.type: /);
  });

  it('refuses an unstamped request', async () => {
    const r = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/evaluate_policies',
      JSON.stringify({ organizationId: org, activity: signTx(A) }),
      { noStamp: true },
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
  });
});

describe('after every dry run', () => {
  it('nothing was recorded or signed: no activity, vote or policy evaluation appeared', async () => {
    expect(await traces()).toEqual(before);
  });
});
