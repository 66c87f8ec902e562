/**
 * Consensus end to end over real parts only: the real embedded service, the real gRPC daemon wired
 * to it with the in-process transport (as `countersign serve` does) and stamping with a non-root
 * user's API key, a real grpc-js client, and approvals through @turnkey/http's TurnkeyClient
 * (unmodified) over HTTP. A 2-of-3 ALLOW policy puts signing activities into CONSENSUS_NEEDED;
 * GetActivity and WatchActivity follow them to their end and return only verified results.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { pino } from 'pino';
import {
  bytesToHex,
  getAddress,
  hashMessage,
  keccak256,
  recoverAddress,
  recoverTransactionAddress,
  type Address,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import {
  ERROR_CODE_TRAILER,
  POLICY_EVALUATIONS_TRAILER,
  POLICY_OUTCOME_TRAILER,
} from '../src/daemon/grpc-status.js';
import type { GetActivityResponse } from '../src/daemon/proto.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import {
  createSignerClient,
  openSignerStub,
  unwrap,
  watchStream,
  type RpcError,
  type ServerStreamMethod,
  type SignerClient,
  type StreamWatch,
  type UnaryMethod,
} from './helpers/grpc-client.js';
import type { ApiKeyPair } from './helpers/api-key.js';
import { insertUserWithApiKey } from './helpers/users.js';

const CHAIN_ID = '11155111';
/** The consensus policy covers transactions to this address (and raw payloads). */
const D = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';
/** No policy covers this one: a non-root user is denied implicitly. */
const ELSEWHERE = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const POLL_MS = 50;

let h: EmbeddedHarness;
let org: string;
let account: Address;
let transport: Transport;
/** get_activity queries the daemon made (to see that a watch stops polling). */
let getActivityQueries = 0;
let daemon: RunningDaemon;
let signer: SignerClient;
let activities: ActivityClient;
const users = {} as Record<
  'root' | 'alice' | 'bob' | 'carol',
  { id: string; key: ApiKeyPair; api: TurnkeyClient }
>;

const turnkey = (key: ApiKeyPair) => new TurnkeyClient({ baseUrl: h.baseUrl }, new TurnkeyApiKeyStamper(key));

/** There is no create_users activity yet: non-root users go in through the store, as activities write. */
async function insertUser(name: string): Promise<{ id: string; key: ApiKeyPair; api: TurnkeyClient }> {
  const { userId: id, key } = await insertUserWithApiKey(h.service.store, { organizationId: org, name });
  return { id, key, api: turnkey(key) };
}

function vote(who: 'bob' | 'carol', fingerprint: string, approve: boolean) {
  const body = { timestampMs: String(Date.now()), organizationId: org, parameters: { fingerprint } };
  return approve
    ? users[who].api.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', ...body })
    : users[who].api.rejectActivity({ type: 'ACTIVITY_TYPE_REJECT_ACTIVITY', ...body });
}

/** GetActivity and WatchActivity through a grpc-js client built from signer.proto. */
interface ActivityClient {
  get(req: { activityId: string; organizationId?: string }): Promise<GetActivityResponse>;
  getError(req: { activityId: string }): Promise<RpcError>;
  watch(
    req: { activityId: string; pollIntervalMs?: number },
    opts?: { deadlineMs?: number },
  ): StreamWatch<GetActivityResponse>;
  close(): void;
}

function createActivityClient(address: string): ActivityClient {
  const client = openSignerStub<{
    GetActivity: UnaryMethod<GetActivityResponse>;
    WatchActivity: ServerStreamMethod<GetActivityResponse>;
  }>(address);
  const callGet = (req: unknown) =>
    new Promise<{ err: grpc.ServiceError | null; res?: GetActivityResponse }>((resolve) => {
      client.GetActivity(req, new grpc.Metadata(), { deadline: Date.now() + 30_000 }, (err, res) =>
        resolve(res === undefined ? { err } : { err, res }),
      );
    });
  return {
    async get(req) {
      const { err, res } = await callGet(req);
      if (err !== null || res === undefined)
        throw new Error(
          `GetActivity failed: ${err?.code} ${err?.details} (${err?.metadata.get(ERROR_CODE_TRAILER)})`,
        );
      return res;
    },
    async getError(req) {
      const { err } = await callGet(req);
      if (err === null) throw new Error('GetActivity was expected to fail');
      return { code: err.code, details: err.details, metadata: err.metadata };
    },
    watch: (req, opts = {}) =>
      watchStream(
        client.WatchActivity(req, new grpc.Metadata(), {
          deadline: Date.now() + (opts.deadlineMs ?? 30_000),
        }),
      ),
    close: () => client.close(),
  };
}

function ethereumTx(to: string, nonce: number) {
  return {
    chainId: CHAIN_ID,
    nonce: String(nonce),
    to,
    value: '1000',
    gasLimit: '60000',
    maxFeePerGas: '2000000000',
    maxPriorityFeePerGas: '1000000000',
  };
}

async function signAwaitingConsensus(nonce: number) {
  const res = unwrap(
    await signer.signTransaction({
      signWith: account,
      mode: 'SIGNING_MODE_SIGN_TRANSACTION',
      ethereum: ethereumTx(D, nonce),
    }),
  );
  expect(res.state).toBe('ACTIVITY_STATE_CONSENSUS_NEEDED');
  return res;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  h = await startEmbedded();
  const creds = h.service.credentials;
  org = creds.organizationId;
  account = getAddress(ethAddressOf(h));
  users.root = {
    id: creds.userId,
    key: { apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey },
    api: turnkey(creds),
  };
  users.alice = await insertUser('alice');
  users.bob = await insertUser('bob');
  users.carol = await insertUser('carol');
  const consensus = `approvers.filter(u, u.id in ['${users.alice.id}', '${users.bob.id}', '${users.carol.id}']).count() >= 2`;
  for (const [policyName, condition] of [
    ['two of three to D', `eth.tx.to == '${D}'`],
    ['two of three for raw payloads', "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS'"],
  ] as const) {
    const r = await users.root.api.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { policyName, effect: 'EFFECT_ALLOW', consensus, condition, notes: '' },
    });
    expect(r.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  }

  // As src/cli.ts wires `serve` in embedded mode, but stamping as alice (her submission is the
  // first approval), and counting the daemon's get_activity queries.
  const inner = inProcessTransport(h.service.handler);
  transport = {
    send: (req) => {
      if (req.path === '/public/v1/query/get_activity') getActivityQueries++;
      return inner.send(req);
    },
    close: () => inner.close(),
  };
  daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client: new PublicApiClient({
      transport,
      stamper: new ApiKeyStamper(users.alice.key),
      organizationId: org,
    }),
    defaultOrganizationId: org,
    idempotencyDbPath: join(h.dataDir, 'daemon.db'),
    logger: pino({ level: 'silent' }),
    drainTimeoutMs: 500,
  });
  signer = createSignerClient({ address: daemon.address });
  activities = createActivityClient(daemon.address);
});

afterAll(async () => {
  signer?.close();
  activities?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
});

describe('consensus through the daemon', () => {
  it('answers CONSENSUS_NEEDED, streams COMPLETED after a second approval with a verified signed transaction, and ends', async () => {
    const pending = await signAwaitingConsensus(10);
    expect(pending.activityId).toMatch(/^[0-9a-f-]{36}$/);
    expect(pending.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pending.signedTransaction).toHaveLength(0);
    expect(pending.signer).toBe('');

    const watch = activities.watch({ activityId: pending.activityId, pollIntervalMs: POLL_MS });
    await watch.received(1);
    expect(watch.messages[0]).toMatchObject({
      activityId: pending.activityId,
      organizationId: org,
      state: 'ACTIVITY_STATE_CONSENSUS_NEEDED',
      fingerprint: pending.fingerprint,
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    });
    expect(watch.messages[0]?.result).toBeUndefined();

    const approved = await vote('bob', pending.fingerprint, true);
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    const end = await watch.ended;
    expect(end.code).toBe(grpc.status.OK);
    // Exactly one message per state: no repeats while it waited.
    expect(watch.messages.map((m) => m.state)).toEqual([
      'ACTIVITY_STATE_CONSENSUS_NEEDED',
      'ACTIVITY_STATE_COMPLETED',
    ]);
    const done = watch.messages[1] as GetActivityResponse;
    expect(done.result).toBe('transaction');
    const tx = done.transaction;
    if (tx === undefined) throw new Error('no transaction in the COMPLETED message');
    const signedHex = bytesToHex(tx.signedTransaction);
    expect(await recoverTransactionAddress({ serializedTransaction: signedHex as never })).toBe(account);
    expect(tx.signer).toBe(account);
    expect(tx.transactionType).toBe('TRANSACTION_TYPE_ETHEREUM');
    expect(tx.transactionHash).toBe(keccak256(signedHex));
    expect(tx.signatures).toHaveLength(1);
    // The same bytes the service recorded as the activity's result.
    const recorded = approved.activity.result as { signTransactionResult?: { signedTransaction: string } };
    expect(signedHex).toBe(`0x${recorded.signTransactionResult?.signedTransaction}`);

    const got = await activities.get({ activityId: pending.activityId });
    expect(got.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(got.fingerprint).toBe(pending.fingerprint);
    expect(got.transaction).toEqual(tx);
  });

  it('streams REJECTED when an approver rejects, and ends', async () => {
    const pending = await signAwaitingConsensus(11);
    const watch = activities.watch({ activityId: pending.activityId, pollIntervalMs: POLL_MS });
    await watch.received(1);
    const rejected = await vote('carol', pending.fingerprint, false);
    expect(rejected.activity.status).toBe('ACTIVITY_STATUS_REJECTED');
    expect((await watch.ended).code).toBe(grpc.status.OK);
    expect(watch.messages.map((m) => m.state)).toEqual([
      'ACTIVITY_STATE_CONSENSUS_NEEDED',
      'ACTIVITY_STATE_REJECTED',
    ]);
    const last = watch.messages[1] as GetActivityResponse;
    expect(last.result).toBeUndefined();
    expect(last.failureCode).toBe('UPSTREAM_PERMISSION_DENIED');
    const got = await activities.get({ activityId: pending.activityId });
    expect(got.state).toBe('ACTIVITY_STATE_REJECTED');
    expect(got.result).toBeUndefined();
  });

  it('refuses a request no policy allows with PERMISSION_DENIED and the POLICY_DENIED code', async () => {
    const res = await signer.signTransaction({
      signWith: account,
      mode: 'SIGNING_MODE_SIGN_TRANSACTION',
      ethereum: ethereumTx(ELSEWHERE, 0),
    });
    if (res.ok) throw new Error('expected a denial');
    expect(res.error.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(res.error.metadata.get(ERROR_CODE_TRAILER)).toEqual(['POLICY_DENIED']);
    expect(res.error.details).toContain('policy engine denied request implicitly');
    expect(res.error.metadata.get(POLICY_OUTCOME_TRAILER)).toEqual(['OUTCOME_DENY_IMPLICIT']);
    const [evaluations] = res.error.metadata.get(POLICY_EVALUATIONS_TRAILER);
    const parsed = JSON.parse(Buffer.from(evaluations as Buffer).toString('utf8')) as { outcome: string }[];
    expect(parsed.length).toBeGreaterThan(0);
    expect(parsed.every((e) => typeof e.outcome === 'string' && e.outcome.startsWith('OUTCOME_'))).toBe(true);
  });

  it('answers CONSENSUS_NEEDED for SignRawPayloads, then GetActivity returns the verified signatures', async () => {
    const payload = keccak256('0x1234').slice(2);
    const pending = unwrap(
      await signer.signRawPayloads({
        signWith: account,
        payloads: [payload],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    );
    expect(pending.state).toBe('ACTIVITY_STATE_CONSENSUS_NEEDED');
    expect(pending.signatures).toEqual([]);
    expect((await activities.get({ activityId: pending.activityId })).state).toBe(
      'ACTIVITY_STATE_CONSENSUS_NEEDED',
    );
    await vote('bob', pending.fingerprint, true);
    const got = await activities.get({ activityId: pending.activityId });
    expect(got.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(got.type).toBe('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS');
    expect(got.result).toBe('payloads');
    const p = got.payloads;
    if (p === undefined) throw new Error('no payloads result');
    expect(p.signer).toBe(account);
    expect(p.digests.map((d) => bytesToHex(d))).toEqual([`0x${payload}`]);
    const sig = p.signatures[0];
    if (sig === undefined) throw new Error('no signature');
    const recovered = await recoverAddress({
      hash: `0x${payload}`,
      signature: { r: bytesToHex(sig.r), s: bytesToHex(sig.s), yParity: sig.v },
    });
    expect(recovered).toBe(account);
  });

  it('answers CONSENSUS_NEEDED for SignMessage, then GetActivity returns the verified signature', async () => {
    const message = 'approve me';
    const pending = unwrap(
      await signer.signMessage({ signWith: account, personalMessage: new TextEncoder().encode(message) }),
    );
    expect(pending.state).toBe('ACTIVITY_STATE_CONSENSUS_NEEDED');
    expect(pending.activityId).not.toBe('');
    await vote('bob', pending.fingerprint, true);
    const got = await activities.get({ activityId: pending.activityId });
    expect(got.state).toBe('ACTIVITY_STATE_COMPLETED');
    const p = got.payloads;
    const sig = p?.signatures[0];
    if (p === undefined || sig === undefined) throw new Error('no payloads result');
    expect(bytesToHex(p.digests[0] as Uint8Array)).toBe(hashMessage(message));
    const recovered = await recoverAddress({
      hash: hashMessage(message),
      signature: { r: bytesToHex(sig.r), s: bytesToHex(sig.s), yParity: sig.v },
    });
    expect(recovered).toBe(account);
  });

  it('returns a non-signing activity without a result, and refuses a malformed or unknown id', async () => {
    const policy = await users.root.api.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { policyName: 'unrelated', effect: 'EFFECT_DENY', condition: 'false', notes: '' },
    });
    const got = await activities.get({ activityId: policy.activity.id });
    expect(got).toMatchObject({ state: 'ACTIVITY_STATE_COMPLETED', type: 'ACTIVITY_TYPE_CREATE_POLICY_V3' });
    expect(got.result).toBeUndefined();

    const bad = await activities.getError({ activityId: 'not-a-uuid' });
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).toContain('activity_id');
    const unknown = await activities.getError({ activityId: randomUUID() });
    expect(unknown.code).toBe(grpc.status.NOT_FOUND);
  });

  it('stops polling when the client cancels the watch', async () => {
    const pending = await signAwaitingConsensus(12);
    const watch = activities.watch({ activityId: pending.activityId, pollIntervalMs: POLL_MS });
    await watch.received(1);
    watch.cancel();
    expect((await watch.ended).code).toBe(grpc.status.CANCELLED);
    await sleep(3 * POLL_MS);
    const after = getActivityQueries;
    await sleep(6 * POLL_MS);
    expect(getActivityQueries).toBe(after);
  });

  it('ends the watch at its deadline and stops polling', async () => {
    const pending = await signAwaitingConsensus(13);
    const watch = activities.watch(
      { activityId: pending.activityId, pollIntervalMs: POLL_MS },
      { deadlineMs: 400 },
    );
    expect((await watch.ended).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(watch.messages.map((m) => m.state)).toEqual(['ACTIVITY_STATE_CONSENSUS_NEEDED']);
    await sleep(3 * POLL_MS);
    const after = getActivityQueries;
    await sleep(6 * POLL_MS);
    expect(getActivityQueries).toBe(after);
  });

  it('withholds a completed result that does not verify against the intent (SIGNATURE_VERIFICATION_FAILED)', async () => {
    const pending = await signAwaitingConsensus(15);
    await vote('bob', pending.fingerprint, true);
    // A public API that answers get_activity with one byte of the signed body changed.
    const tampering: Transport = {
      send: async (req) => {
        const res = await transport.send(req);
        if (req.path !== '/public/v1/query/get_activity') return res;
        const json = JSON.parse(new TextDecoder().decode(res.body)) as {
          activity: { result: { signTransactionResult?: { signedTransaction: string } } };
        };
        const r = json.activity.result.signTransactionResult;
        if (r !== undefined) {
          const hex = r.signedTransaction;
          r.signedTransaction = hex.slice(0, 20) + (hex[20] === '0' ? '1' : '0') + hex.slice(21);
        }
        return { status: res.status, body: new TextEncoder().encode(JSON.stringify(json)) };
      },
      close: async () => {},
    };
    const tampered = await startDaemon({
      listen: '127.0.0.1:0',
      client: new PublicApiClient({
        transport: tampering,
        stamper: new ApiKeyStamper(users.alice.key),
        organizationId: org,
      }),
      defaultOrganizationId: org,
      idempotencyDbPath: join(h.dataDir, 'daemon-tampered.db'),
      logger: pino({ level: 'silent' }),
      drainTimeoutMs: 500,
    });
    const client = createActivityClient(tampered.address);
    try {
      const err = await client.getError({ activityId: pending.activityId });
      expect(err.code).toBe(grpc.status.INTERNAL);
      expect(err.metadata.get(ERROR_CODE_TRAILER)).toEqual(['SIGNATURE_VERIFICATION_FAILED']);
      const watch = client.watch({ activityId: pending.activityId, pollIntervalMs: POLL_MS });
      const end = await watch.ended;
      expect(end.code).toBe(grpc.status.INTERNAL);
      expect(end.metadata.get(ERROR_CODE_TRAILER)).toEqual(['SIGNATURE_VERIFICATION_FAILED']);
      expect(watch.messages).toEqual([]);
      // The untampered daemon returns it.
      expect((await activities.get({ activityId: pending.activityId })).state).toBe(
        'ACTIVITY_STATE_COMPLETED',
      );
    } finally {
      client.close();
      await tampered.close();
    }
  });

  it('ends open watches with UNAVAILABLE when the daemon closes, without waiting for a decision', async () => {
    const pending = await signAwaitingConsensus(14);
    const second = await startDaemon({
      listen: '127.0.0.1:0',
      client: new PublicApiClient({
        transport,
        stamper: new ApiKeyStamper(users.alice.key),
        organizationId: org,
      }),
      defaultOrganizationId: org,
      idempotencyDbPath: join(h.dataDir, 'daemon-2.db'),
      logger: pino({ level: 'silent' }),
      drainTimeoutMs: 500,
    });
    const client = createActivityClient(second.address);
    try {
      const watch = client.watch({ activityId: pending.activityId, pollIntervalMs: POLL_MS });
      await watch.received(1);
      const started = Date.now();
      await second.close();
      expect(Date.now() - started).toBeLessThan(3000);
      const end = await watch.ended;
      expect(end.code).toBe(grpc.status.UNAVAILABLE);
      expect(end.details).toContain('shutting down');
    } finally {
      client.close();
    }
  });
});
