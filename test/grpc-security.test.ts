/**
 * The sidecar is safe to expose (issue 9, the gRPC side), against real `countersign serve`
 * processes: TLS with client certificates, the callers file (certificate subjects and bearer
 * tokens, each mapped to its own user), the daemon's own non-root identity bound by policy, the
 * refusal to listen on the network without TLS, Unix sockets, watch-stream caps and lifetimes,
 * and the in-flight bound under a flood.
 */
import { spawnSync } from 'node:child_process';
import http2 from 'node:http2';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { TurnkeyClient } from '@turnkey/http';
import { parseTransaction, recoverTransactionAddress, type TransactionSerialized } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE_TRAILER } from '../src/daemon/grpc-status.js';
import type { GetActivityResponse } from '../src/daemon/proto.js';
import type { Credentials } from '../src/service/embedded.js';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import {
  createSignerClient,
  openSignerStub,
  watchStream,
  type RpcResult,
  type ServerStreamMethod,
  type SignerClient,
} from './helpers/grpc-client.js';
import { createPki, type CertPair, type Pki } from './helpers/pki.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

type Json = Record<string, any>;
const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const ts = () => String(Date.now());

function initDataDir(dir: string): { creds: Credentials; eth: string; sol: string } {
  const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', dir, '--log-level', 'warn'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`init failed: ${r.stderr}`);
  const creds = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as Credentials;
  const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')!.address;
  const sol = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_SOLANA')!.address;
  return { creds, eth, sol };
}

const ethTx = (signWith: string, nonce: number) => ({
  signWith,
  ethereum: {
    type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559' as const,
    chainId: '31337',
    nonce: String(nonce),
    to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    value: '1',
    gasLimit: '21000',
    maxFeePerGas: '30000000000',
    maxPriorityFeePerGas: '1000000000',
  },
});

const codeOf = (r: RpcResult<unknown>) => (r.ok ? 0 : r.error.code);
const errorCodeOf = (r: RpcResult<unknown>) =>
  r.ok ? undefined : r.error.metadata.get(ERROR_CODE_TRAILER)[0];

function rootClient(baseUrl: string, creds: Credentials): TurnkeyClient {
  return new TurnkeyClient(
    { baseUrl },
    new ApiKeyStamper({ apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey }),
  );
}

async function createUserWithKey(
  root: TurnkeyClient,
  org: string,
  name: string,
  key: ApiKeyPair,
): Promise<string> {
  const res = await root.createUsers({
    type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
    timestampMs: ts(),
    organizationId: org,
    parameters: {
      users: [
        {
          userName: name,
          apiKeys: [
            { apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    },
  } as never);
  return (res.activity.result as Json).createUsersResult.userIds[0] as string;
}

async function createPolicy(root: TurnkeyClient, org: string, p: Json): Promise<string> {
  const res = await root.createPolicy({
    type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
    timestampMs: ts(),
    organizationId: org,
    parameters: p,
  } as never);
  return (res.activity.result as Json).createPolicyResult.policyId as string;
}

async function deletePolicy(root: TurnkeyClient, org: string, policyId: string): Promise<void> {
  await root.deletePolicy({
    type: 'ACTIVITY_TYPE_DELETE_POLICY',
    timestampMs: ts(),
    organizationId: org,
    parameters: { policyId },
  } as never);
}

async function activityCount(root: TurnkeyClient, org: string): Promise<number> {
  const r = await root.getActivities({ organizationId: org, paginationOptions: { limit: '100' } } as never);
  return (r.activities as unknown[]).length;
}

describe('gRPC over mTLS with a callers file', () => {
  let dir: string;
  let pki: Pki;
  let serve: ServeProcess;
  let root: TurnkeyClient;
  let org: string;
  let eth: string;
  let sol: string;
  let paymentsUser: string;
  let batchUser: string;
  const token = randomBytes(24).toString('base64url');
  const clients: SignerClient[] = [];

  const connect = (cert: CertPair | undefined, metadata?: Record<string, string>): SignerClient => {
    const c = createSignerClient({
      address: serve.ready.grpc,
      deadlineMs: 15_000,
      credentials: grpc.credentials.createSsl(pki.ca.cert, cert?.key ?? null, cert?.cert ?? null),
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
      ...(metadata === undefined ? {} : { metadata }),
    });
    clients.push(c);
    return c;
  };

  /** Calls refused for an unknown caller, as the operator scrapes it. */
  const refusedUnauthenticated = async (): Promise<number> => {
    const metrics = await (await fetch(`${serve.ready.api!}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith('countersign_grpc_refused_total{reason="unauthenticated"}'));
    return Number(line?.split(' ')[1]);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-grpc-sec-'));
    const init = initDataDir(dir);
    org = init.creds.organizationId;
    eth = init.eth;
    sol = init.sol;
    pki = createPki(dir);
    const paymentsKey = newApiKey();
    const batchKey = newApiKey();
    writeFileSync(join(dir, 'payments-key.json'), JSON.stringify(paymentsKey), { mode: 0o600 });
    writeFileSync(join(dir, 'batch-key.json'), JSON.stringify(batchKey), { mode: 0o600 });
    writeFileSync(
      join(dir, 'clients.json'),
      JSON.stringify({
        clients: [
          {
            name: 'payments',
            certificateSubject: 'CN=payments',
            signWith: [eth],
            chains: ['ethereum'],
            methods: ['SignTransaction', 'GetActivity'],
            apiKeyFile: 'payments-key.json',
          },
          {
            name: 'batch',
            tokenSha256: createHash('sha256').update(token).digest('hex'),
            signWith: ['*'],
            apiKeyFile: 'batch-key.json',
          },
        ],
      }),
    );
    serve = await startServe([
      '--data-dir',
      dir,
      '--log-level',
      'info',
      '--grpc-tls-cert',
      pki.server.certFile,
      '--grpc-tls-key',
      pki.server.keyFile,
      '--grpc-client-ca',
      pki.ca.certFile,
      '--grpc-clients',
      join(dir, 'clients.json'),
    ]);
    root = rootClient(serve.ready.api!, init.creds);
    paymentsUser = await createUserWithKey(root, org, 'payments service', paymentsKey);
    batchUser = await createUserWithKey(root, org, 'batch service', batchKey);
    await createPolicy(root, org, {
      policyName: 'payments and batch services sign',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'",
      consensus: `approvers.any(u, u.id == '${paymentsUser}' || u.id == '${batchUser}')`,
    });
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    serve?.proc.kill('SIGTERM');
    await serve?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs for a CA-signed client allowed for the address, and the activity names that client’s user', async () => {
    const r = await connect(pki.client('payments')).signTransaction(ethTx(eth, 1));
    expect(r.ok, JSON.stringify(!r.ok && r.error.details)).toBe(true);
    if (!r.ok) return;
    const signed = `0x${Buffer.from(r.response.signedTransaction).toString('hex')}` as TransactionSerialized;
    expect((await recoverTransactionAddress({ serializedTransaction: signed })).toLowerCase()).toBe(
      eth.toLowerCase(),
    );
    expect(parseTransaction(signed).nonce).toBe(1);
    const a = await root.getActivity({ organizationId: org, activityId: r.response.activityId });
    expect((a.activity.votes as Json[])[0]!.userId).toBe(paymentsUser);
  });

  it('refuses no certificate and a self-signed one at the handshake, and submits nothing', async () => {
    const before = await activityCount(root, org);
    const none = await connect(undefined).signTransaction(ethTx(eth, 2));
    expect(codeOf(none)).toBe(grpc.status.UNAVAILABLE);
    const self = await connect(pki.selfSigned('payments')).signTransaction(ethTx(eth, 3));
    expect(codeOf(self)).toBe(grpc.status.UNAVAILABLE);
    expect(await activityCount(root, org)).toBe(before);
  });

  it('refuses an unknown CA-signed client (UNAUTHENTICATED) and a known one outside its grant (PERMISSION_DENIED)', async () => {
    const before = await activityCount(root, org);
    const stranger = await connect(pki.client('stranger')).signTransaction(ethTx(eth, 4));
    expect(codeOf(stranger)).toBe(grpc.status.UNAUTHENTICATED);
    expect(errorCodeOf(stranger)).toBe('CALLER_UNKNOWN');
    const payments = connect(pki.client('payments'));
    const otherAddress = await payments.signTransaction(
      ethTx('0x70997970C51812dc3A010C7d01b50e0d17dc79C8', 5),
    );
    expect(codeOf(otherAddress)).toBe(grpc.status.PERMISSION_DENIED);
    expect(errorCodeOf(otherAddress)).toBe('CALLER_NOT_ALLOWED');
    const otherMethod = await payments.signMessage({ signWith: eth, digest: new Uint8Array(32).fill(7) });
    expect(codeOf(otherMethod)).toBe(grpc.status.PERMISSION_DENIED);
    const otherChain = await payments.signRawPayloads({
      signWith: sol,
      payloads: ['00'],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
    } as never);
    expect(codeOf(otherChain)).toBe(grpc.status.PERMISSION_DENIED);
    expect(await activityCount(root, org)).toBe(before);
  });

  it('refuses an unknown caller at its headers: a compressed message it sends is never inflated', async () => {
    const refusedBefore = await refusedUnauthenticated();
    const port = Number(serve.ready.grpc.split(':').pop());
    const call = (cert: CertPair, path: string, body: Buffer) => {
      const session = http2.connect(`https://localhost:${port}`, {
        ca: pki.ca.cert,
        cert: cert.cert,
        key: cert.key,
      });
      session.on('error', () => {});
      return new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const req = session.request({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          'grpc-encoding': 'gzip',
          te: 'trailers',
        });
        req.on('response', (h) => {
          if (h['grpc-status'] !== undefined) resolve(h);
        });
        req.on('trailers', resolve);
        req.on('error', reject);
        req.end(body);
      }).finally(() => session.close());
    };
    // Flagged compressed, and not gzip at all: a server that inflated it would answer INTERNAL.
    const notGzip = Buffer.concat([Buffer.from([1, 0, 0, 0x40, 0]), Buffer.alloc(0x4000, 0x5a)]);
    const stranger = await call(pki.client('stranger'), '/countersign.v1.Signer/SignTransaction', notGzip);
    expect(stranger['grpc-status']).toBe(String(grpc.status.UNAUTHENTICATED));
    expect(stranger[ERROR_CODE_TRAILER]).toBe('CALLER_UNKNOWN');
    // A known caller's same bytes are read (and fail to inflate); the stranger's refusal was counted once.
    const known = await call(pki.client('payments'), '/countersign.v1.Signer/SignTransaction', notGzip);
    expect(known['grpc-status']).toBe(String(grpc.status.INTERNAL));
    expect(decodeURIComponent(String(known['grpc-message']))).toBe('Failed to decompress message');
    expect(await refusedUnauthenticated()).toBe(refusedBefore + 1);
    // Health answers whoever reaches the listener: only the Signer's calls need a known caller.
    const health = await call(
      pki.client('stranger'),
      '/grpc.health.v1.Health/Check',
      Buffer.from([0, 0, 0, 0, 0]),
    );
    expect(health['grpc-status']).toBe('0');
  });

  it('identifies a bearer-token caller the same way, and refuses a wrong token', async () => {
    const host = pki.client('batch-host');
    const good = await connect(host, { authorization: `Bearer ${token}` }).signTransaction(ethTx(eth, 6));
    expect(good.ok, JSON.stringify(!good.ok && good.error.details)).toBe(true);
    if (!good.ok) return;
    const a = await root.getActivity({ organizationId: org, activityId: good.response.activityId });
    expect((a.activity.votes as Json[])[0]!.userId).toBe(batchUser);
    const before = await activityCount(root, org);
    const bad = await connect(host, { authorization: 'Bearer not-the-token' }).signTransaction(ethTx(eth, 7));
    expect(codeOf(bad)).toBe(grpc.status.UNAUTHENTICATED);
    expect(await activityCount(root, org)).toBe(before);
  });

  it('keeps the data files private (0600)', () => {
    for (const f of [
      'countersign.db',
      'countersign.db-wal',
      'daemon.db',
      'credentials.json',
      'daemon-signer.json',
    ])
      expect((statSync(join(dir, f)).mode & 0o777).toString(8), f).toBe('600');
  });
});

describe('the daemon’s own identity, Unix sockets, listeners and watch streams', () => {
  let dir: string;
  let serve: ServeProcess;
  let root: TurnkeyClient;
  let creds: Credentials;
  let eth: string;
  let client: SignerClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-grpc-unix-'));
    ({ creds, eth } = initDataDir(dir));
    serve = await startServe([
      '--data-dir',
      dir,
      '--log-level',
      'warn',
      '--grpc-listen',
      `unix:${join(dir, 'signer.sock')}`,
      '--grpc-max-watch-streams',
      '2',
      '--grpc-watch-max-seconds',
      '2',
    ]);
    root = rootClient(serve.ready.api!, creds);
    client = createSignerClient({ address: serve.ready.grpc, deadlineMs: 15_000 });
  });

  afterAll(async () => {
    client?.close();
    serve?.proc.kill('SIGTERM');
    await serve?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('listens on a Unix socket only its owner and group can use', () => {
    expect(serve.ready.grpc).toBe(`unix:${join(dir, 'signer.sock')}`);
    expect((statSync(join(dir, 'signer.sock')).mode & 0o777).toString(8)).toBe('660');
  });

  it('signs as a non-root user, so a DENY policy stops a gRPC SignTransaction', async () => {
    const signer = JSON.parse(readFileSync(join(dir, 'daemon-signer.json'), 'utf8')) as Json;
    const user = await root.getUser({ organizationId: creds.organizationId, userId: signer.userId });
    expect(user.user.userName).toBe('countersign-daemon');
    const ok = await client.signTransaction(ethTx(eth, 0));
    expect(ok.ok).toBe(true);
    const deny = await createPolicy(root, creds.organizationId, {
      policyName: 'nothing signs',
      effect: 'EFFECT_DENY',
      condition: 'true',
    });
    const denied = await client.signTransaction(ethTx(eth, 1));
    expect(codeOf(denied)).toBe(grpc.status.PERMISSION_DENIED);
    expect(errorCodeOf(denied)).toBe('POLICY_DENIED');
    await deletePolicy(root, creds.organizationId, deny);
    expect((await client.signTransaction(ethTx(eth, 2))).ok).toBe(true);
  });

  it('caps watch streams per caller and ends a stream at its lifetime with DEADLINE_EXCEEDED', async () => {
    // Make the daemon's signing wait for the root user: drop its own policy, require root's approval.
    const policies = await root.getPolicies({ organizationId: creds.organizationId });
    const own = (policies.policies as Json[]).find((p) => p.policyName === 'countersign daemon may sign')!;
    await deletePolicy(root, creds.organizationId, own.policyId as string);
    await createPolicy(root, creds.organizationId, {
      policyName: 'root approves signing',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'",
      consensus: `approvers.any(u, u.id == '${creds.userId}')`,
    });
    const pending = await client.signTransaction(ethTx(eth, 3));
    expect(pending.ok).toBe(true);
    if (!pending.ok) return;
    expect(pending.response.state).toBe('ACTIVITY_STATE_CONSENSUS_NEEDED');
    const stub = openSignerStub<{ WatchActivity: ServerStreamMethod<GetActivityResponse> }>(serve.ready.grpc);
    try {
      const open = () =>
        watchStream(
          stub.WatchActivity.call(stub, { activityId: pending.response.activityId }, new grpc.Metadata(), {
            deadline: Date.now() + 20_000,
          }),
        );
      const [a, b] = [open(), open()];
      await a.received(1);
      await b.received(1);
      const third = await open().ended;
      expect(third.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(third.metadata.get(ERROR_CODE_TRAILER)[0]).toBe('RESOURCE_LIMIT_EXCEEDED');
      const [endA, endB] = await Promise.all([a.ended, b.ended]);
      expect(endA.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(endA.metadata.get(ERROR_CODE_TRAILER)[0]).toBe('WATCH_LIFETIME_EXCEEDED');
      expect(endB.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      // Once they ended, a new stream is accepted again.
      const again = open();
      await again.received(1);
      again.cancel();
    } finally {
      stub.close();
    }
  });

  it('refuses to listen on a network address without TLS unless --grpc-insecure, before anything listens', () => {
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        'serve',
        '--data-dir',
        dir,
        '--grpc-listen',
        '0.0.0.0:0',
        '--api-listen',
        '127.0.0.1:0',
        '--proxy-listen',
        '127.0.0.1:0',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is reachable from the network and has no TLS');
    expect(r.stdout).not.toContain('ready ');
  });
});

describe('a flood of gRPC calls against --grpc-max-in-flight 64', () => {
  let dir: string;
  let serve: ServeProcess;
  let eth: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-grpc-flood-'));
    ({ eth } = initDataDir(dir));
    serve = await startServe(['--data-dir', dir, '--log-level', 'warn', '--grpc-max-in-flight', '64']);
  });

  afterAll(async () => {
    serve?.proc.kill('SIGTERM');
    await serve?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('sheds the excess with RESOURCE_EXHAUSTED, signs every accepted call correctly, and keeps memory bounded', async () => {
    const client = createSignerClient({ address: serve.ready.grpc, deadlineMs: 60_000 });
    try {
      const results = await Promise.all(
        Array.from({ length: 2000 }, (_, i) => client.signTransaction(ethTx(eth, i))),
      );
      const accepted = results.filter((r) => r.ok);
      const shed = results.filter((r) => !r.ok && r.error.code === grpc.status.RESOURCE_EXHAUSTED);
      expect(accepted.length + shed.length).toBe(2000);
      expect(accepted.length).toBeGreaterThanOrEqual(64);
      expect(shed.length).toBeGreaterThan(0);
      for (const r of shed) expect(errorCodeOf(r)).toBe('RESOURCE_LIMIT_EXCEEDED');
      for (const r of accepted.slice(0, 100)) {
        if (!r.ok) continue;
        const signed =
          `0x${Buffer.from(r.response.signedTransaction).toString('hex')}` as TransactionSerialized;
        expect((await recoverTransactionAddress({ serializedTransaction: signed })).toLowerCase()).toBe(
          eth.toLowerCase(),
        );
      }
      // The server process stays small: nothing queued beyond the bound.
      const status = readFileSync(`/proc/${serve.proc.pid}/status`, 'utf8');
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
      expect(rssKb).toBeLessThan(600 * 1024);
      // The shed calls are counted where the operator scrapes metrics.
      const metrics = await (await fetch(`${serve.ready.api!}/metrics`)).text();
      const line = metrics
        .split('\n')
        .find((l) => l.startsWith('countersign_grpc_refused_total{reason="in_flight"}'));
      expect(Number(line?.split(' ')[1])).toBe(shed.length);
    } finally {
      client.close();
    }
  });
});

describe('--grpc-max-connections 2', () => {
  let dir: string;
  let serve: ServeProcess;
  let eth: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-grpc-conns-'));
    ({ eth } = initDataDir(dir));
    serve = await startServe(['--data-dir', dir, '--log-level', 'warn', '--grpc-max-connections', '2']);
  });

  afterAll(async () => {
    serve?.proc.kill('SIGTERM');
    await serve?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends a third connection GOAWAY (ENHANCE_YOUR_CALM, "too many connections"; RESOURCE_EXHAUSTED to grpc-js), counts it, and takes a caller once one closes', async () => {
    const open = async () => {
      const session = http2.connect(`http://${serve.ready.grpc}`);
      session.on('error', () => {});
      const goaway = new Promise<{ code: number; reason: string }>((resolve) =>
        session.once('goaway', (code: number, _last: number, data?: Buffer) =>
          resolve({ code, reason: data?.toString() ?? '' }),
        ),
      );
      await new Promise<void>((resolve, reject) => {
        session.once('remoteSettings', () => resolve());
        session.once('close', () => reject(new Error('closed before its settings')));
      });
      return { session, goaway };
    };
    const held = [await open(), await open()];
    const third = await open();
    expect(await third.goaway).toEqual({
      code: http2.constants.NGHTTP2_ENHANCE_YOUR_CALM,
      reason: 'too many connections',
    });
    // A gRPC caller refused so sees RESOURCE_EXHAUSTED (grpc-js maps ENHANCE_YOUR_CALM to it).
    const refused = createSignerClient({ address: serve.ready.grpc, deadlineMs: 30_000 });
    try {
      const r = await refused.signTransaction(ethTx(eth, 0));
      expect(r.ok ? 'signed' : r.error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    } finally {
      refused.close();
    }
    const metrics = await (await fetch(`${serve.ready.api!}/metrics`)).text();
    expect(metrics).toMatch(/^countersign_grpc_connections_refused_total 2$/m);
    // One held connection closes: a gRPC caller takes its place and signs (once the server has
    // seen the close, which may trail the client's by a moment: until then it is refused).
    held[0]!.session.close();
    await new Promise((r) => held[0]!.session.once('close', r));
    let signed = false;
    for (let attempt = 1; attempt <= 50 && !signed; attempt++) {
      const client = createSignerClient({ address: serve.ready.grpc, deadlineMs: 30_000 });
      try {
        const r = await client.signTransaction(ethTx(eth, attempt));
        if (!r.ok) expect(r.error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
        signed = r.ok;
      } finally {
        client.close();
      }
      if (!signed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(signed).toBe(true);
    held[1]!.session.close();
  });
});
