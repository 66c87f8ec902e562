/**
 * SendEthTransaction and WatchSendTransaction end to end over real parts only: a real anvil
 * (Prague), the real embedded service with `--chain-rpc eip155:31337=<anvil>`, the real gRPC daemon
 * wired to it with the in-process transport (as `countersign serve` does), and a grpc-js client
 * built from signer.proto. Every send is followed on the chain: the receipt's hash must be the
 * streamed one, values must arrive once, and refused requests must leave the nonce where it was.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { pino } from 'pino';
import {
  createPublicClient,
  encodeDeployData,
  http,
  parseEther,
  toHex,
  type Hex,
  type PublicClient,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import {
  ERROR_CODE_TRAILER,
  ERROR_FIELD_TRAILER,
  POLICY_OUTCOME_TRAILER,
} from '../src/daemon/grpc-status.js';
import type {
  EvaluatePoliciesResponse,
  GetActivityResponse,
  SendEthTransactionResponse,
  SendTransactionStatus,
} from '../src/daemon/proto.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import type { ApiKeyPair } from './helpers/api-key.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { getNextNonce } from './helpers/eth-send.js';
import {
  openSignerStub,
  watchStream,
  type RpcError,
  type RpcResult,
  type ServerStreamMethod,
  type StreamWatch,
  type UnaryMethod,
} from './helpers/grpc-client.js';
import { insertUserWithApiKey } from './helpers/users.js';

const CAIP2 = 'eip155:31337';
const POLL_MS = 50;

let anvil: RunningAnvil;
let h: EmbeddedHarness;
let chain: PublicClient;
let from: Hex;
let transport: Transport;
/** get_send_transaction_status queries the daemons made (to see that a watch stops polling). */
let statusQueries = 0;
let daemon: RunningDaemon;
let client: SendClient;

/** A fresh recipient per tag, so balances start at zero. */
function recipient(tag: number): Hex {
  return `0x${'22'.repeat(18)}${tag.toString(16).padStart(4, '0')}` as Hex;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rpc = (method: string, params: unknown[] = []) =>
  chain.request({ method: method as never, params: params as never });

/* ---- a grpc-js client of the two RPCs (and GetActivity), built with the daemon's loader options ---- */

interface EthCallInput {
  readonly to: string;
  readonly value?: string;
  readonly data?: Uint8Array;
}

interface SendInput {
  readonly organizationId?: string;
  readonly from?: string;
  readonly idempotencyKey?: string;
  readonly caip2?: string;
  readonly calls?: readonly EthCallInput[];
  readonly nonce?: string;
  readonly gasLimit?: string;
  readonly maxFeePerGas?: string;
  readonly maxPriorityFeePerGas?: string;
  readonly sponsor?: boolean;
  readonly deadline?: string;
  readonly gasStationNonce?: string;
}

interface SendClient {
  send(req: SendInput): Promise<RpcResult<SendEthTransactionResponse>>;
  getActivity(activityId: string): Promise<RpcResult<GetActivityResponse>>;
  evaluate(req: SendInput): Promise<RpcResult<EvaluatePoliciesResponse>>;
  watch(req: {
    sendTransactionStatusId: string;
    pollIntervalMs?: number;
  }): StreamWatch<SendTransactionStatus>;
  close(): void;
}

function createSendClient(address: string): SendClient {
  const c = openSignerStub<{
    SendEthTransaction: UnaryMethod;
    GetActivity: UnaryMethod;
    EvaluatePolicies: UnaryMethod;
    WatchSendTransaction: ServerStreamMethod<SendTransactionStatus>;
  }>(address);
  const unary = <T>(method: UnaryMethod, req: unknown) =>
    new Promise<RpcResult<T>>((resolve) =>
      method.call(c, req, new grpc.Metadata(), { deadline: Date.now() + 60_000 }, (err, res) =>
        resolve(
          err === null
            ? { ok: true, response: res as T }
            : { ok: false, error: { code: err.code, details: err.details, metadata: err.metadata } },
        ),
      ),
    );
  return {
    send: (req) => unary(c.SendEthTransaction, req),
    getActivity: (activityId) => unary(c.GetActivity, { activityId }),
    evaluate: (req) => unary(c.EvaluatePolicies, { sendEthTransaction: req }),
    watch: (req) =>
      watchStream(
        c.WatchSendTransaction.call(c, req, new grpc.Metadata(), { deadline: Date.now() + 60_000 }),
      ),
    close: () => c.close(),
  };
}

function ok<T>(r: RpcResult<T>): T {
  if (r.ok) return r.response;
  throw new Error(
    `gRPC call failed: ${grpc.status[r.error.code]} (${String(r.error.metadata.get(ERROR_CODE_TRAILER)[0])}): ${r.error.details}`,
  );
}

function failed<T>(r: RpcResult<T>): RpcError {
  if (r.ok) throw new Error(`the call was expected to fail, it answered ${JSON.stringify(r.response)}`);
  return r.error;
}

/** A completed send's status id. */
async function sent(req: SendInput, c: SendClient = client): Promise<string> {
  const res = ok(await c.send({ from, caip2: CAIP2, ...req }));
  expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
  expect(res.sendTransactionStatusId).toMatch(/^[0-9a-f-]{36}$/);
  return res.sendTransactionStatusId;
}

/** Watches a send to its end; the stream must end OK on a terminal status with no repeats. */
async function followed(id: string, c: SendClient = client): Promise<SendTransactionStatus[]> {
  const w = c.watch({ sendTransactionStatusId: id, pollIntervalMs: POLL_MS });
  const end = await w.ended;
  expect(end.code, end.details).toBe(grpc.status.OK);
  const last = w.messages.at(-1);
  expect(['SEND_TRANSACTION_STATUS_CODE_INCLUDED', 'SEND_TRANSACTION_STATUS_CODE_FAILED']).toContain(
    last?.status,
  );
  for (const [i, m] of w.messages.entries()) {
    expect(m.sendTransactionStatusId).toBe(id);
    const prev = w.messages[i - 1];
    if (prev !== undefined) expect(m).not.toEqual(prev);
  }
  return w.messages;
}

/** The nonce the service's next send would take (public API get_nonces over HTTP). */
const nextNonce = () => getNextNonce(h, { address: from, caip2: CAIP2 });

function daemonFor(key: ApiKeyPair, name: string): Promise<RunningDaemon> {
  const org = h.service.credentials.organizationId;
  return startDaemon({
    listen: '127.0.0.1:0',
    client: new PublicApiClient({ transport, stamper: new ApiKeyStamper(key), organizationId: org }),
    defaultOrganizationId: org,
    idempotencyDbPath: join(h.dataDir, `${name}.db`),
    logger: pino({ level: 'silent' }),
    drainTimeoutMs: 500,
  });
}

beforeAll(async () => {
  anvil = await startAnvil();
  h = await startEmbedded({ chainRpc: new Map([[CAIP2, anvil.rpcUrl]]) });
  chain = createPublicClient({ transport: http(anvil.rpcUrl), pollingInterval: 50 });
  from = ethAddressOf(h);
  await rpc('anvil_setBalance', [from, toHex(parseEther('1000'))]);
  const inner = inProcessTransport(h.service.handler);
  transport = {
    send: (req) => {
      if (req.path === '/public/v1/query/get_send_transaction_status') statusQueries++;
      return inner.send(req);
    },
    close: () => inner.close(),
  };
  daemon = await daemonFor(h.service.credentials, 'daemon');
  client = createSendClient(daemon.address);
});

afterAll(async () => {
  client?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
  await anvil?.stop();
});

describe('SendEthTransaction and WatchSendTransaction', () => {
  it('sends one call and streams it to INCLUDED with the hash of the mined receipt', async () => {
    const to = recipient(1);
    const res = ok(await client.send({ from, caip2: CAIP2, calls: [{ to, value: '12345' }] }));
    expect(res).toMatchObject({ state: 'ACTIVITY_STATE_COMPLETED' });
    expect(res.activityId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const messages = await followed(res.sendTransactionStatusId);
    const last = messages.at(-1) as SendTransactionStatus;
    expect(last).toMatchObject({ status: 'SEND_TRANSACTION_STATUS_CODE_INCLUDED', errorMessage: '' });
    const receipt = await chain.getTransactionReceipt({ hash: last.txHash as Hex });
    expect(receipt.transactionHash).toBe(last.txHash);
    expect(receipt.status).toBe('success');
    expect(receipt.from).toBe(from.toLowerCase());
    expect(receipt.to).toBe(to);
    expect(await chain.getBalance({ address: to })).toBe(12345n);

    // GetActivity hands the status id back (how a caller finds it after consensus).
    const activity = ok(await client.getActivity(res.activityId));
    expect(activity).toMatchObject({
      state: 'ACTIVITY_STATE_COMPLETED',
      type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
      result: 'sendTransaction',
      sendTransaction: { sendTransactionStatusId: res.sendTransactionStatusId },
    });
  });

  it('passes calldata and caller fees through; a terminal send streams once and ends', async () => {
    const to = recipient(2);
    const id = await sent({
      calls: [{ to, value: '5', data: Uint8Array.of(0xde, 0xad, 0xbe, 0xef) }],
      gasLimit: '30000',
      maxFeePerGas: '30000000000',
      maxPriorityFeePerGas: '1000000000',
    });
    const last = (await followed(id)).at(-1) as SendTransactionStatus;
    expect(last.status).toBe('SEND_TRANSACTION_STATUS_CODE_INCLUDED');
    const tx = await chain.getTransaction({ hash: last.txHash as Hex });
    expect(tx.input).toBe('0xdeadbeef');
    expect(tx.gas).toBe(30_000n);
    expect(tx.maxFeePerGas).toBe(30_000_000_000n);
    expect(tx.maxPriorityFeePerGas).toBe(1_000_000_000n);
    // Watching an already included send: exactly the current status, then the end.
    const again = await followed(id);
    expect(again).toEqual([last]);
  });

  it('answers a retry with the same idempotency_key with the same send, sent once', async () => {
    const to = recipient(3);
    const before = await nextNonce();
    const req = { from, caip2: CAIP2, calls: [{ to, value: '777' }], idempotencyKey: `send-${randomUUID()}` };
    const first = ok(await client.send(req));
    await sleep(5); // a later timestamp: only the recorded body makes the retry the same activity
    const [second, third] = await Promise.all([client.send(req), client.send(req)]);
    for (const r of [ok(second), ok(third)]) {
      expect(r.activityId).toBe(first.activityId);
      expect(r.sendTransactionStatusId).toBe(first.sendTransactionStatusId);
    }
    const last = (await followed(first.sendTransactionStatusId)).at(-1);
    expect(last?.status).toBe('SEND_TRANSACTION_STATUS_CODE_INCLUDED');
    expect(await chain.getBalance({ address: to })).toBe(777n);
    expect(await nextNonce()).toBe(before + 1n);

    const conflict = failed(await client.send({ ...req, calls: [{ to, value: '778' }] }));
    expect(conflict.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(conflict.metadata.get(ERROR_CODE_TRAILER)).toEqual(['IDEMPOTENCY_KEY_CONFLICT']);
    expect(await nextNonce()).toBe(before + 1n);
  });

  it('lands 20 concurrent sends from one address with consecutive nonces, all INCLUDED', async () => {
    const first = await nextNonce();
    const to = recipient(4);
    // Distinct values: identical bodies in one millisecond would be one activity.
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => sent({ calls: [{ to, value: String(i + 1) }] })),
    );
    expect(new Set(ids).size).toBe(20);
    const finals = await Promise.all(
      ids.map(async (id) => (await followed(id)).at(-1) as SendTransactionStatus),
    );
    const nonces = await Promise.all(
      finals.map(async (s) => {
        expect(s.status).toBe('SEND_TRANSACTION_STATUS_CODE_INCLUDED');
        const receipt = await chain.getTransactionReceipt({ hash: s.txHash as Hex });
        expect(receipt.status).toBe('success');
        return BigInt((await chain.getTransaction({ hash: s.txHash as Hex })).nonce);
      }),
    );
    expect(nonces.sort((a, b) => (a < b ? -1 : 1))).toEqual(
      Array.from({ length: 20 }, (_, i) => first + BigInt(i)),
    );
    expect(await chain.getBalance({ address: to })).toBe(210n);
    expect(await nextNonce()).toBe(first + 20n);
  });

  const BAD: readonly [string, SendInput, grpc.status, string, string][] = [
    ['a malformed from', { from: '0x1234' }, grpc.status.INVALID_ARGUMENT, 'FIELD_INVALID', 'from'],
    [
      'a from with a wrong EIP-55 checksum',
      { from: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'from',
    ],
    ['no from', { from: '' }, grpc.status.INVALID_ARGUMENT, 'FIELD_MISSING', 'from'],
    [
      'a malformed to',
      { calls: [{ to: '0x12', value: '1' }] },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'calls[0].to',
    ],
    [
      'a malformed to in a later call',
      { calls: [{ to: recipient(5) }, { to: 'not an address' }] },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'calls[1].to',
    ],
    [
      'a negative value',
      { calls: [{ to: recipient(5), value: '-1' }] },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'calls[0].value',
    ],
    [
      'a hex value',
      { calls: [{ to: recipient(5), value: '0x10' }] },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'calls[0].value',
    ],
    ['no calls', { calls: [] }, grpc.status.INVALID_ARGUMENT, 'FIELD_MISSING', 'calls'],
    ['a non-EVM caip2', { caip2: 'solana:mainnet' }, grpc.status.INVALID_ARGUMENT, 'FIELD_INVALID', 'caip2'],
    // Well formed, but the service has no endpoint for it: the service's refusal, in this request's terms.
    ['an unknown caip2', { caip2: 'eip155:1' }, grpc.status.INVALID_ARGUMENT, 'FIELD_INVALID', 'caip2'],
    ['a non-decimal nonce', { nonce: '1e3' }, grpc.status.INVALID_ARGUMENT, 'FIELD_INVALID', 'nonce'],
    [
      'a priority fee above the max fee',
      { maxFeePerGas: '10', maxPriorityFeePerGas: '11' },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'max_priority_fee_per_gas',
    ],
    // Checked by the service (intrinsic gas, EIP-2028), named here in this request's terms.
    [
      'a gas limit below intrinsic',
      { gasLimit: '20999' },
      grpc.status.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'gas_limit',
    ],
    [
      'from not in the organization',
      { from: '0x000000000000000000000000000000000000dEaD' },
      grpc.status.NOT_FOUND,
      'SIGN_WITH_NOT_FOUND',
      'from',
    ],
  ];

  it.each(BAD)(
    'refuses %s naming the field, with no nonce taken',
    async (_, override, code, errorCode, field) => {
      const before = await nextNonce();
      const err = failed(
        await client.send({ from, caip2: CAIP2, calls: [{ to: recipient(5), value: '1' }], ...override }),
      );
      expect(err.code, err.details).toBe(code);
      expect(err.metadata.get(ERROR_CODE_TRAILER)).toEqual([errorCode]);
      expect(err.metadata.get(ERROR_FIELD_TRAILER)).toEqual([field]);
      expect(await nextNonce()).toBe(before);
      expect(await chain.getBalance({ address: recipient(5) })).toBe(0n);
    },
  );

  it('sends a sponsored 2-call batch: the sponsor submits and pays, the account delegates and signs it', async () => {
    const sponsor = h.service.sponsorAddress;
    await rpc('anvil_setBalance', [sponsor, toHex(parseEther('5'))]);
    const balance = await chain.getBalance({ address: from });
    const deadline = String(Math.floor(Date.now() / 1000) + 600);
    const id = await sent({
      sponsor: true,
      deadline,
      calls: [{ to: recipient(40) }, { to: recipient(41), data: Uint8Array.of(1) }],
    });
    const last = (await followed(id)).at(-1) as SendTransactionStatus;
    expect(last).toMatchObject({ status: 'SEND_TRANSACTION_STATUS_CODE_INCLUDED', errorMessage: '' });
    const tx = await chain.getTransaction({ hash: last.txHash as Hex });
    expect(tx.from).toBe(sponsor);
    expect(tx.to).toBe(from.toLowerCase());
    expect(tx.type).toBe('eip7702');
    // The account paid nothing: its balance is what it was.
    expect(await chain.getBalance({ address: from })).toBe(balance);
    // An expired deadline is refused by the service, naming the field, with nothing sent.
    const refused = failed(
      await client.send({
        from,
        caip2: CAIP2,
        sponsor: true,
        deadline: '1',
        calls: [{ to: recipient(42) }],
      }),
    );
    expect(refused.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(refused.metadata.get(ERROR_FIELD_TRAILER)[0]).toBe('deadline');
  });

  it('streams FAILED with the decoded revert reason for a reverting call', async () => {
    // Init code copies the 37-byte runtime after it and returns it; the runtime reverts every call
    // with Error("nope") (ABI: selector 0x08c379a0, offset, length 4, "nope"), as in eth-send.test.ts.
    const init = '0x6025600c60003960256000f3';
    const runtime = '6308c379a060e01b60005260206004526004602452636e6f706560e01b60445260646000fd';
    const [deployer] = (await rpc('eth_accounts')) as Hex[];
    const deployHash = (await rpc('eth_sendTransaction', [
      { from: deployer, data: encodeDeployData({ abi: [], bytecode: `${init}${runtime}` as Hex }) },
    ])) as Hex;
    const contract = (await chain.waitForTransactionReceipt({ hash: deployHash })).contractAddress as Hex;
    expect(await chain.getCode({ address: contract })).toBe(`0x${runtime}`);

    const id = await sent({ calls: [{ to: contract, data: Uint8Array.of(1) }], gasLimit: '100000' });
    const last = (await followed(id)).at(-1) as SendTransactionStatus;
    expect(last.status).toBe('SEND_TRANSACTION_STATUS_CODE_FAILED');
    expect(last.errorMessage).toBe('execution reverted: nope');
    const receipt = await chain.getTransactionReceipt({ hash: last.txHash as Hex });
    expect(receipt.transactionHash).toBe(last.txHash);
    expect(receipt.status).toBe('reverted');
  });

  it('answers NOT_FOUND for an unknown id and INVALID_ARGUMENT for a malformed one', async () => {
    const unknown = client.watch({ sendTransactionStatusId: randomUUID() });
    const end = await unknown.ended;
    expect(end.code).toBe(grpc.status.NOT_FOUND);
    expect(unknown.messages).toEqual([]);
    const malformed = client.watch({ sendTransactionStatusId: 'not-an-id' });
    const bad = await malformed.ended;
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.metadata.get(ERROR_FIELD_TRAILER)).toEqual(['send_transaction_status_id']);
  });

  it('stops polling when the client cancels, and ends open watches with UNAVAILABLE on shutdown', async () => {
    // Mining off: the send stays BROADCASTING while the watches are open.
    await rpc('evm_setAutomine', [false]);
    const to = recipient(6);
    let id: string;
    try {
      id = await sent({ calls: [{ to, value: '6' }] });
      const cancelled = client.watch({ sendTransactionStatusId: id, pollIntervalMs: POLL_MS });
      await cancelled.received(1);
      cancelled.cancel();
      expect((await cancelled.ended).code).toBe(grpc.status.CANCELLED);
      await sleep(3 * POLL_MS);
      const after = statusQueries;
      await sleep(6 * POLL_MS);
      expect(statusQueries).toBe(after);

      const second = await daemonFor(h.service.credentials, 'daemon-drain');
      const other = createSendClient(second.address);
      try {
        const open = other.watch({ sendTransactionStatusId: id, pollIntervalMs: POLL_MS });
        await open.received(1);
        expect(open.messages[0]?.status).not.toBe('SEND_TRANSACTION_STATUS_CODE_INCLUDED');
        const started = Date.now();
        await second.close();
        expect(Date.now() - started).toBeLessThan(3000);
        const end = await open.ended;
        expect(end.code).toBe(grpc.status.UNAVAILABLE);
        expect(end.metadata.get(ERROR_CODE_TRAILER)).toEqual(['DAEMON_SHUTTING_DOWN']);
      } finally {
        other.close();
      }
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    await rpc('evm_mine');
    const last = (await followed(id)).at(-1);
    expect(last?.status).toBe('SEND_TRANSACTION_STATUS_CODE_INCLUDED');
    expect(await chain.getBalance({ address: to })).toBe(6n);
  });

  it('answers CONSENSUS_NEEDED when a policy asks for it, and PERMISSION_DENIED with the decision on a deny', async () => {
    // Two non-root users; a policy lets them send to one address with both approving.
    const org = h.service.credentials.organizationId;
    const users = await Promise.all(
      ['alice', 'bob'].map(async (name) => {
        const { userId: id, key } = await insertUserWithApiKey(h.service.store, {
          organizationId: org,
          name,
        });
        return { name, id, key };
      }),
    );
    const [alice, bob] = users as [(typeof users)[number], (typeof users)[number]];
    const allowed = recipient(7);
    const root = new TurnkeyClient({ baseUrl: h.baseUrl }, new TurnkeyApiKeyStamper(h.service.credentials));
    const policy = await root.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        policyName: 'alice and bob together may pay the allowed recipient',
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.filter(u, u.id in ['${alice.id}', '${bob.id}']).count() >= 2`,
        condition: `eth.tx.to == '${allowed}'`,
        notes: '',
      },
    });
    expect(policy.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    const asAlice = await daemonFor(alice.key, 'daemon-alice');
    const aliceClient = createSendClient(asAlice.address);
    try {
      const before = await nextNonce();
      // A dry run first: what the policy engine would decide, with nothing sent or recorded.
      const dryDeny = ok(
        await aliceClient.evaluate({ from, caip2: CAIP2, calls: [{ to: recipient(8), value: '1' }] }),
      );
      expect(dryDeny).toMatchObject({ outcome: 'OUTCOME_DENY_IMPLICIT', rootQuorumReached: false });
      const dryConsensus = ok(
        await aliceClient.evaluate({ from, caip2: CAIP2, calls: [{ to: allowed, value: '70' }] }),
      );
      expect(dryConsensus.outcome).toBe('OUTCOME_REQUIRES_CONSENSUS');
      expect(dryConsensus.policyEvaluations).toContainEqual(
        expect.objectContaining({ policyId: policy.activity.result.createPolicyResult?.policyId }),
      );
      expect(await nextNonce()).toBe(before);
      const denied = failed(
        await aliceClient.send({ from, caip2: CAIP2, calls: [{ to: recipient(8), value: '1' }] }),
      );
      expect(denied.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(denied.metadata.get(POLICY_OUTCOME_TRAILER)).toEqual(['OUTCOME_DENY_IMPLICIT']);
      expect(await nextNonce()).toBe(before);

      const pending = ok(
        await aliceClient.send({ from, caip2: CAIP2, calls: [{ to: allowed, value: '70' }] }),
      );
      expect(pending).toMatchObject({
        state: 'ACTIVITY_STATE_CONSENSUS_NEEDED',
        sendTransactionStatusId: '',
      });
      expect(pending.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(await nextNonce()).toBe(before);

      const approval = await new TurnkeyClient(
        { baseUrl: h.baseUrl },
        new TurnkeyApiKeyStamper(bob.key),
      ).approveActivity({
        type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
        timestampMs: String(Date.now()),
        organizationId: org,
        parameters: { fingerprint: pending.fingerprint },
      });
      expect(approval.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      const done = ok(await aliceClient.getActivity(pending.activityId));
      expect(done).toMatchObject({ state: 'ACTIVITY_STATE_COMPLETED', result: 'sendTransaction' });
      const id = done.sendTransaction?.sendTransactionStatusId as string;
      const last = (await followed(id, aliceClient)).at(-1) as SendTransactionStatus;
      expect(last.status).toBe('SEND_TRANSACTION_STATUS_CODE_INCLUDED');
      expect(BigInt((await chain.getTransaction({ hash: last.txHash as Hex })).nonce)).toBe(before);
      expect(await chain.getBalance({ address: allowed })).toBe(70n);
    } finally {
      aliceClient.close();
      await asAlice.close();
    }
  });
});
