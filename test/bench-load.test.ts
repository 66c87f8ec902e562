/**
 * The bench's load generator (bench/load.ts) and its hand-framed HTTP/2 client (bench/h2client.ts)
 * against a real `serve`: every call it counts as a success must be one the daemon answered with
 * grpc-status 0 and a transaction signed by the requested account, and a call the daemon refuses
 * must count as a failure. The node:http2 client (BENCH_CLIENT=node-http2) is held to the same.
 * The server runs under jemalloc, as the bench and the image run it (bench/allocator.ts; CI
 * installs libjemalloc2, and there is no silent skip), so the signatures checked here were made
 * with its native addons and node's OpenSSL allocating through jemalloc.
 * Nothing here reads a rate or a latency.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { recoverTransactionAddress, type TransactionSerialized } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAllocator } from '../bench/allocator.js';
import { H2GrpcClient } from '../bench/h2client.js';
import { frame as h2Frame } from '../src/daemon/h2/frames.js';
import { runLoad } from '../bench/load.js';
import { ethereumRequest, frame, MODE, signerProto } from '../bench/requests.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const PATH = '/countersign.v1.Signer/SignTransaction';
/** A signer the service does not hold: every call is refused (cheap, and no key is used). */
const UNKNOWN_SIGNER = '0x000000000000000000000000000000000000dead';
const Response = signerProto.lookupType('countersign.v1.SignTransactionResponse');

let dir: string;
let serve: ServeProcess;
let eth: string;

beforeAll(async () => {
  const allocator = serverAllocator('jemalloc');
  if (allocator.env.LD_PRELOAD === undefined)
    throw new Error(`${allocator.description}: apt-get install libjemalloc2`);
  dir = mkdtempSync(join(tmpdir(), 'countersign-bench-load-'));
  serve = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'warn'], allocator.env);
  const account = serve.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  if (account === undefined) throw new Error('the default wallet has no Ethereum account');
  eth = account.address;
}, 120_000);

afterAll(async () => {
  serve?.proc.kill('SIGTERM');
  await serve?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** The signer the response's signed transaction recovers to (viem, not the daemon's code). */
async function signerOf(message: Buffer): Promise<string> {
  const res = Response.toObject(Response.decode(message), { bytes: Buffer }) as {
    signedTransaction: Buffer;
    signer: string;
  };
  const recovered = await recoverTransactionAddress({
    serializedTransaction: `0x${res.signedTransaction.toString('hex')}` as TransactionSerialized,
  });
  expect(res.signer.toLowerCase()).toBe(recovered.toLowerCase());
  return recovered;
}

it('runs the server under jemalloc (mapped into it, not ignored by the loader)', () => {
  const maps = readFileSync(`/proc/${serve.proc.pid as number}/maps`, 'utf8');
  expect(maps).toMatch(/\/libjemalloc\.so\.2$/m);
});

describe.each(['lean', 'node-http2'])('the load generator (%s client)', (client) => {
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.BENCH_CLIENT;
    process.env.BENCH_CLIENT = client;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.BENCH_CLIENT;
    else process.env.BENCH_CLIENT = saved;
  });

  it('counts a call as done only with grpc-status 0 and a transaction signed by the account', async () => {
    let nonce = client === 'lean' ? 0 : 1_000_000;
    const messages: Buffer[] = [];
    const r = await runLoad({
      authority: serve.ready.grpc,
      path: PATH,
      body: () => ethereumRequest(eth, MODE.SIGN_TRANSACTION, nonce++),
      shape: { kind: 'closed', concurrency: 16 },
      seconds: 1,
      connections: 2,
      onOk: (_i, message) => messages.push(message),
    });
    expect(r.failed).toBe(0);
    expect(r.ok).toBeGreaterThan(0);
    expect(r.sent).toBe(r.ok);
    expect(r.latencies).toHaveLength(r.ok);
    expect(r.lateness).toHaveLength(0); // a closed loop has no schedule to be late for
    expect(messages).toHaveLength(r.ok);
    for (const m of messages) expect((await signerOf(m)).toLowerCase()).toBe(eth.toLowerCase());
  }, 60_000);

  /** An open loop of calls the daemon refuses (an unknown signer), their nonces from `first`. */
  const refusedOpenLoop = (rate: number, seconds: number, first: number) => {
    let n = first;
    return runLoad({
      authority: serve.ready.grpc,
      path: PATH,
      body: () => ethereumRequest(UNKNOWN_SIGNER, MODE.SIGN_TRANSACTION, n++),
      shape: { kind: 'open', rate, maxInFlight: 8 },
      seconds,
      connections: 1,
    });
  };

  it('counts a refused call as failed (an unknown signer)', async () => {
    const r = await refusedOpenLoop(50, 0.5, client === 'lean' ? 0 : 1_000_000);
    expect(r.sent).toBeGreaterThan(0);
    expect(r.ok).toBe(0);
    expect(r.failed).toBe(r.sent);
    // An open loop says how late each call went out: once per call, never before it was due.
    expect(r.lateness).toHaveLength(r.sent);
    expect(r.lateness[0]).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('sends each open-loop call once it is due, not one interval after', async () => {
    // Due at 0, 500, 1,000 and 1,500 ms of a 1,750 ms run: four calls. A generator that waits for
    // the interval after a call's due time sends three (the fourth would go out past the end).
    const r = await refusedOpenLoop(2, 1.75, client === 'lean' ? 2_000_000 : 3_000_000);
    expect(r.sent).toBe(4);
    expect(r.lateness).toHaveLength(4);
  }, 60_000);
});

/** 200 KiB of calldata: thirteen DATA frames, past the 64 KiB a connection starts with. */
function bigRequest(nonce: number): Buffer {
  return frame({
    signWith: eth,
    mode: MODE.SIGN_TRANSACTION,
    ethereum: {
      type: 3,
      chainId: '31337',
      nonce: String(nonce),
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      value: '0',
      data: Buffer.alloc(200 * 1024, 0xab),
      gasLimit: '30000000',
      maxFeePerGas: '2000000000',
      maxPriorityFeePerGas: '1000000000',
    },
  });
}

describe('H2GrpcClient', () => {
  it('sends a request larger than a frame and the initial window, and reads its answer', async () => {
    const client = await H2GrpcClient.connect(serve.ready.grpc);
    try {
      const big = bigRequest(7);
      const { status, message } = await new Promise<{ status: string; message: Buffer | undefined }>(
        (resolve) => client.unary(PATH, big, (status, message) => resolve({ status, message })),
      );
      expect(status).toBe('0');
      expect(message).toBeDefined();
      expect((await signerOf(message as Buffer)).toLowerCase()).toBe(eth.toLowerCase());
    } finally {
      client.close();
    }
  }, 60_000);

  /** A bare TCP server that answers the preface with `frames` (SETTINGS, GOAWAY...) and nothing else. */
  async function frameServer(frames: Buffer): Promise<Server> {
    const server = createServer((socket) => {
      socket.once('data', () => socket.write(frames));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }
  const call = (client: H2GrpcClient, body: Buffer) =>
    new Promise<string>((resolve) => client.unary(PATH, body, (s) => resolve(s)));

  it('fails the calls a GOAWAY leaves without a stream, and every later one', async () => {
    const server = await frameServer(
      Buffer.concat([h2Frame(0x4, 0, 0, Buffer.alloc(0)), h2Frame(0x7, 0, 0, Buffer.alloc(8))]),
    );
    const client = await H2GrpcClient.connect(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      expect(await call(client, ethereumRequest(eth, MODE.SIGN_TRANSACTION, 1))).toBe('');
      expect(await call(client, ethereumRequest(eth, MODE.SIGN_TRANSACTION, 2))).toBe('');
    } finally {
      client.close();
      server.close();
    }
  });

  it('fails a request larger than the stream window the server allows', async () => {
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(0x4, 0); // INITIAL_WINDOW_SIZE
    settings.writeUInt32BE(100_000, 2); // below the request, above the 64 KiB it first waits for
    const server = await frameServer(h2Frame(0x4, 0, 0, settings));
    const client = await H2GrpcClient.connect(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      expect(await call(client, bigRequest(8))).toBe('');
    } finally {
      client.close();
      server.close();
    }
  });

  it('answers every call with a failure once the connection is gone', async () => {
    const client = await H2GrpcClient.connect(serve.ready.grpc);
    client.close();
    const status = await new Promise<string>((resolve) =>
      client.unary(PATH, ethereumRequest(eth, MODE.SIGN_TRANSACTION, 99), (s) => resolve(s)),
    );
    expect(status).toBe('');
  });
});

describe('bench/clients.ts', () => {
  it('runs both clients against one serve and prints their figures, with no call failed', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/clients.ts'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, BENCH_CLIENTS_SLICES: '1', BENCH_CLIENTS_IN_FLIGHT: '8' },
      timeout: 120_000,
    });
    for (const client of ['lean', 'node-http2']) {
      expect(stdout).toMatch(
        new RegExp(
          `^${client}: \\d+/s \\(0 failed\\); server \\d+ µs CPU/call, client \\d+ µs CPU/call; ms p50 [\\d.]+ p90 [\\d.]+ p99 [\\d.]+$`,
          'm',
        ),
      );
    }
  }, 120_000);
});

describe('bench/servers.ts', () => {
  const run = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/servers.ts'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: {
        ...process.env,
        BENCH_SERVERS_SLICES: '1',
        BENCH_SERVERS_IN_FLIGHT: '8',
        BENCH_SERVERS_WARMUP_SECONDS: '1',
        ...env,
      },
      timeout: 120_000,
    });

  it('runs two servers, each with its own environment and node options, and prints their figures', async () => {
    const { stdout } = await run({ BENCH_SERVERS_B: 'BENCH_AB_PROBE=1 --max-semi-space-size=8' });
    const figures = String.raw`\d+/s \(0 failed\), server \d+ µs CPU/call; ms p50 [\d.]+ p90 [\d.]+ p99 [\d.]+$`;
    expect(stdout).toMatch(new RegExp(`^A \\(as is\\): ${figures}`, 'm'));
    expect(stdout).toMatch(new RegExp(`^B \\(BENCH_AB_PROBE=1 --max-semi-space-size=8\\): ${figures}`, 'm'));
  }, 120_000);

  it('refuses a token that is neither NAME=value nor --flag, naming it', async () => {
    await expect(run({ BENCH_SERVERS_A: 'semi-space' })).rejects.toThrow(
      /BENCH_SERVERS_A: 'semi-space' is neither NAME=value nor --flag/,
    );
  }, 120_000);
});
