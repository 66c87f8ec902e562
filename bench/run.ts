/**
 * `npm run bench`: gRPC SignTransaction (EIP-1559) through `countersign serve` on the embedded
 * default, full path (gRPC → daemon → stamped request → service → sign → store → verify), driven by
 * a load generator (bench/load.ts, HTTP/2 framed by hand in bench/h2client.ts) whose own CPU cost
 * per call is measured and printed;
 * and, in the same run, viem's in-process `privateKeyToAccount(...).signTransaction` loop, and
 * one line of calls made one after another through a plain `@grpc/grpc-js` client.
 * Every call signs a different transaction (its own nonce), so nothing is answered from the
 * service's idempotency cache. Each line's request bodies are built before its measured run (the
 * number its own warm-up's rate calls for), so the load generator, which shares the two cores with
 * the server, spends the run on the calls alone. Then eth_send_transaction through gRPC
 * SendEthTransaction against a real anvil (`serve --chain-rpc`): acknowledgements (nonce allocated,
 * signed, recorded) per second, and how many of them the service then reports INCLUDED, followed
 * with WatchSendTransaction.
 *
 * Prints throughput, p50/p99 latency and CPU per call: for the gRPC lines the server process's CPU
 * time (every thread: the daemon's main thread, the service thread, libuv and V8 helpers) ÷ calls,
 * read from /proc around the measured run, with the share of the main thread and of the busiest
 * other thread (the service thread under load); for viem the bench process's own. The machine is
 * shared, so compare CPU per call rather than rates between runs. The ratio to viem printed for the
 * Ethereum 64-in-flight line is measured in one run, in alternating slices of at least 2 s (viem's
 * loop, then the line: BENCH_SECONDS / 2 of each), so that a change in the machine's speed during
 * the run moves both rates alike. Not a test: nothing here asserts a time.
 * BENCH_ONLY=sign or BENCH_ONLY=send runs one group; BENCH_LINE=<substring> runs only the lines
 * whose name contains it (the viem line when the Ethereum 64-in-flight line runs, for the ratio;
 * that line when the half-of-peak line runs, for its rate); BENCH_SECONDS sets each run's length;
 * BENCH_SERVE_NODE_ARGS are options for the server's node, space-separated (e.g. `--cpu-prof
 * --cpu-prof-dir=DIR`: a profile per thread, written when the server exits). The server runs under
 * jemalloc when this machine has it, as the image does (allocator.ts; BENCH_ALLOCATOR=glibc).
 *
 * Warm-up: a signing sidecar runs for days, so the sign group measures a warmed process. Before the
 * first line the server serves BENCH_WARMUP_SECONDS (default 10) of SignTransaction at 64 in flight,
 * the five chains in turn, and the viem loop runs as long unmeasured; each line then has its own 2 s
 * warm-up. V8 keeps compiling hot functions for 10–20 s after start-up (perf: 16% of the server's CPU
 * was TurboFan 3–8 s into the load, 1.5% after 20 s), and code that has not been optimized yet runs
 * in the baseline tier at several times the cost, so without it the first lines measured compilation
 * as much as signing. BENCH_WARMUP_SECONDS=0 measures the way stops before the 25th did.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpcJs from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { bech32 } from '@scure/base';
import { Psbt } from 'bitcoinjs-lib';
import { privateKeyToAccount } from 'viem/accounts';
import { LOADER_OPTIONS, loadSignerProto, type SendTransactionStatus } from '../src/daemon/proto.js';
import { startAnvil } from '../test/helpers/anvil.js';
import { startServe } from '../test/helpers/serve.js';
import { serverAllocator } from './allocator.js';
import { runLoad, type LoadShape } from './load.js';
import { processCpu } from './proc-cpu.js';
import { ethereumRequest, frame, MODE, percentile, signerProto } from './requests.js';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const GROUPS = ['sign', 'send'] as const;
const ONLY = process.env.BENCH_ONLY;
if (ONLY !== undefined && !(GROUPS as readonly string[]).includes(ONLY))
  throw new Error(`BENCH_ONLY must be one of ${GROUPS.join(', ')}`);
const runs = (group: (typeof GROUPS)[number]) => ONLY === undefined || ONLY === group;
const LINE = process.env.BENCH_LINE;
const SERVE_OPTIONS = {
  nodeArgs: (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
};
const ALLOCATOR = serverAllocator();
/** Whether the line named `label` is selected by BENCH_LINE (case-insensitive substring). */
const selected = (label: string) => LINE === undefined || label.toLowerCase().includes(LINE.toLowerCase());

interface ServerCpu {
  /** µs of the whole process. */
  readonly totalUs: number;
  /** µs of the main thread (the gRPC daemon). */
  readonly mainUs: number;
  /** µs of the busiest other thread (the service worker under load). */
  readonly busiestOtherUs: number;
}

function cpuDelta(pid: number, before: Map<string, number>, after: Map<string, number>): ServerCpu {
  let totalUs = 0;
  let mainUs = 0;
  let busiestOtherUs = 0;
  for (const [tid, us] of after) {
    const d = us - (before.get(tid) ?? 0);
    totalUs += d;
    if (tid === String(pid)) mainUs = d;
    else busiestOtherUs = Math.max(busiestOtherUs, d);
  }
  return { totalUs, mainUs, busiestOtherUs };
}

// Requests are encoded once per call with protobufjs from the same proto the daemon serves.
const SendEthTransactionRequest = signerProto.lookupType('countersign.v1.SendEthTransactionRequest');
const SendEthTransactionResponse = signerProto.lookupType('countersign.v1.SendEthTransactionResponse');

function solanaRequest(signWith: string, mode: number, n: number): Buffer {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0); // SystemProgram::Transfer
  data.writeBigUInt64LE(BigInt(1000 + n), 4);
  return frame({
    signWith,
    mode,
    solana: {
      feePayer: signWith,
      recentBlockhash: 'EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k',
      instructions: [
        {
          programId: '11111111111111111111111111111111',
          accounts: [
            { pubkey: signWith, isSigner: true, isWritable: true },
            { pubkey: 'Hozo7TadHq6PMMiGLGNvgk79Hvj5VTAM7Ny2bamQ2m8q', isSigner: false, isWritable: true },
          ],
          data,
        },
      ],
    },
  });
}

function tronRequest(signWith: string, mode: number, n: number): Buffer {
  return frame({
    signWith,
    mode,
    tron: {
      kind: 1, // TRX transfer
      ownerAddress: signWith,
      toAddress: 'TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaG',
      amount: String(1000 + n),
      refBlockBytes: '3b9d',
      refBlockHash: '6e2b9b2a2c3d4e5f',
      expiration: '1795370000000',
      timestamp: '1795369940000',
    },
  });
}

/** A PSBT spending one (made-up) P2WPKH output of the signer's to another address. */
function bitcoinRequest(signWith: string, mode: number, n: number): Buffer {
  const program = Buffer.from(
    bech32.fromWords(bech32.decode(signWith as `${string}1${string}`).words.slice(1)),
  );
  const script = Buffer.concat([Buffer.from([0x00, 0x14]), program]);
  const psbt = new Psbt();
  const txid = Buffer.alloc(32);
  txid.writeUInt32BE(n + 1, 0);
  psbt.addInput({ hash: txid, index: 0, witnessUtxo: { script, value: 100_000n } });
  psbt.addOutput({ script, value: 90_000n - BigInt(n % 1000) });
  return frame({ signWith, mode, bitcoin: { unsigned: psbt.toBuffer(), network: 1 } });
}

function tempoRequest(signWith: string, mode: number, nonce: number): Buffer {
  return frame({
    signWith,
    mode,
    tempo: {
      chainId: '42431',
      nonce: String(nonce),
      gasLimit: '100000',
      maxFeePerGas: '20000000000',
      maxPriorityFeePerGas: '1000000000',
      calls: [
        {
          to: '0x20c0000000000000000000000000000000000001',
          value: '0',
          data: Buffer.from('a9059cbb', 'hex'),
        },
      ],
    },
  });
}

/** One call to a recipient and of a value no other call uses (no two bodies are alike). */
function sendRequest(from: string, n: number): Buffer {
  return frame(
    {
      from,
      caip2: SEND_CAIP2,
      calls: [{ to: `0x${(0x100000 + n).toString(16).padStart(40, '0')}`, value: String(1000 + n) }],
    },
    SendEthTransactionRequest,
  );
}

const SEND_CAIP2 = 'eip155:31337';
const SEND_IN_FLIGHT = 16;
/** WatchSendTransaction's poll interval: the resolution of the time-to-inclusion figures. */
const WATCH_POLL_MS = 250;
/** One acknowledged send in this many is watched while the load runs. */
const SEND_WATCH_SAMPLE = 40;
/** Status reads at once in the sweep after the run (the daemon allows 32 watch streams per caller). */
const SWEEP_BATCH = 16;
/** How long a watched send may take to end. */
const SWEEP_TIMEOUT_MS = 60_000;
/** The status read of each send after the run (answered at once unless the service is swamped). */
const READ_WITHIN_MS = 10_000;

interface Result {
  label: string;
  requests: number;
  seconds: number;
  p50ms: number;
  p99ms: number;
  /** CPU µs per call: the server process's (gRPC lines) or the bench's own (viem). */
  cpuUsPerCall?: number;
  note?: string;
}

const VIEM_LABEL = 'viem privateKeyToAccount().signTransaction, in-process loop';
const PEAK_LABEL = 'Ethereum EIP-1559, SIGN_TRANSACTION, 64 in flight';
const HALF_LABEL = 'Ethereum EIP-1559, half of peak';

/**
 * viem's in-process loop, measured in slices: `measure(s)` signs for `s` seconds and adds to the
 * totals, so its slices can alternate with the Ethereum 64-in-flight line's (see `measure`).
 */
function viemLoop(): {
  warm(seconds: number): Promise<void>;
  measure(seconds: number): Promise<void>;
  result(): Result;
} {
  const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
  const tx = {
    type: 'eip1559' as const,
    chainId: 31337,
    to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' as const,
    value: 1_000_000_000_000_000n,
    gas: 21000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  };
  let n = 0;
  let calls = 0;
  let cpuUs = 0;
  let seconds = 0;
  const lat: number[] = [];
  return {
    async warm(s) {
      const end = performance.now() + s * 1000; // unmeasured, as the server's warm-up
      while (performance.now() < end) await account.signTransaction({ ...tx, nonce: n++ });
    },
    async measure(s) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const end = t0 + s * 1000;
      while (performance.now() < end) {
        const t = performance.now();
        await account.signTransaction({ ...tx, nonce: n++ });
        lat.push(performance.now() - t);
        calls++;
      }
      seconds += (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      cpuUs += cpu.user + cpu.system;
    },
    result() {
      lat.sort((a, b) => a - b);
      return {
        label: VIEM_LABEL,
        requests: calls,
        seconds,
        p50ms: percentile(lat, 50),
        p99ms: percentile(lat, 99),
        cpuUsPerCall: cpuUs / Math.max(1, calls),
        note: 'bench process CPU',
      };
    },
  };
}

let nonce = 0;

/**
 * Request bodies built before a measured run, about `expected` of them (with a margin), so the load
 * generator spends the run on the calls alone: it shares the two cores with the server, and some
 * bodies are dear to build (a Bitcoin PSBT through bitcoinjs costs it ~0.6 ms). Past the prebuilt
 * ones, bodies are built as they are asked for.
 */
function prebuilt(request: (i: number) => Buffer, expected: number): () => Buffer {
  const bodies = Array.from({ length: Math.ceil(expected * 1.5) + 256 }, () => request(nonce++));
  let next = 0;
  return () => (next < bodies.length ? (bodies[next++] as Buffer) : request(nonce++));
}

/** What runs between the measured slices of a line (viem's loop, for the ratio), in `slices` turns. */
interface Interleave {
  readonly slices: number;
  readonly between: (seconds: number) => Promise<void>;
}

async function measure(
  label: string,
  server: { grpc: string; pid: number },
  request: (i: number) => Buffer,
  shape: LoadShape,
  interleave?: Interleave,
): Promise<Result> {
  const grpc = server.grpc;
  const load = (seconds: number, body: () => Buffer) =>
    runLoad({
      authority: grpc,
      path: '/countersign.v1.Signer/SignTransaction',
      body,
      shape,
      seconds,
      connections: shape.kind === 'closed' ? Math.min(4, shape.concurrency) : 4,
    });
  const warm = await load(2, () => request(nonce++)); // warm-up: JIT, connections, SQLite pages
  const slices = interleave?.slices ?? 1;
  const sliceS = DURATION_S / slices;
  // Each slice is led by a short unmeasured run (the server busy again before the clock starts).
  const leadS = (k: number) => (k === 0 ? 1 : 0.25);
  let expectedS = DURATION_S;
  for (let k = 0; k < slices; k++) expectedS += leadS(k);
  const body = prebuilt(request, (warm.ok / warm.seconds) * expectedS);
  const threads = new Map<string, number>(); // server CPU µs per thread over the measured slices
  let clientUs = 0;
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let seconds = 0;
  const latencies: number[] = [];
  const lateness: number[] = [];
  for (let k = 0; k < slices; k++) {
    if (interleave !== undefined) await interleave.between(sliceS);
    await load(leadS(k), body);
    const server0 = processCpu(server.pid);
    const cpu0 = process.cpuUsage();
    const r = await load(sliceS, body);
    const cpu = process.cpuUsage(cpu0);
    for (const [tid, us] of processCpu(server.pid))
      threads.set(tid, (threads.get(tid) ?? 0) + us - (server0.get(tid) ?? 0));
    clientUs += cpu.user + cpu.system;
    sent += r.sent;
    ok += r.ok;
    failed += r.failed;
    seconds += r.seconds;
    for (const l of r.latencies) latencies.push(l);
    for (const l of r.lateness) lateness.push(l);
  }
  latencies.sort((x, y) => x - y);
  lateness.sort((x, y) => x - y);
  const serverCpu = cpuDelta(server.pid, new Map(), threads);
  if (failed > 0) process.stderr.write(`${label}: ${failed} calls failed\n`);
  const calls = Math.max(1, sent);
  return {
    label,
    requests: ok,
    seconds,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
    cpuUsPerCall: serverCpu.totalUs / calls,
    note:
      `main thread ${(serverCpu.mainUs / calls).toFixed(0)} µs, busiest other thread ` +
      `${(serverCpu.busiestOtherUs / calls).toFixed(0)} µs; load generator ${(clientUs / calls).toFixed(0)} µs CPU/call` +
      (lateness.length === 0
        ? ''
        : `, sent p50 ${percentile(lateness, 50).toFixed(2)} / p99 ${percentile(lateness, 99).toFixed(2)} ms ` +
          'after due (counted in the latency)'),
  };
}

/**
 * The 1-in-flight line as a plain `@grpc/grpc-js` client sees it: one SignTransaction after
 * another through grpc-js's own Client (its framing, its HTTP/2 session), so the figure includes
 * the client library a Node caller of the daemon would use.
 */
async function measureGrpcJsSequential(
  label: string,
  server: { grpc: string; pid: number },
  request: (i: number) => Buffer,
): Promise<Result> {
  const client = new grpcJs.Client(server.grpc, grpcJs.credentials.createInsecure());
  const identity = (b: Buffer) => b;
  const call = (message: Buffer) =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest('/countersign.v1.Signer/SignTransaction', identity, identity, message, (err) =>
        err === null ? resolve() : reject(err),
      ),
    );
  const run = async (seconds: number, body: () => Buffer) => {
    const latencies: number[] = [];
    let sent = 0;
    let failed = 0;
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const message = body().subarray(5); // the frame's 5-byte prefix is grpc-js's to add
      const t = performance.now();
      sent++;
      try {
        await call(message);
        latencies.push(performance.now() - t);
      } catch {
        failed++;
      }
    }
    return { latencies, sent, failed };
  };
  try {
    const warmS = 2;
    const warm = await run(warmS, () => request(nonce++)); // warm-up
    const body = prebuilt(request, (warm.sent / warmS) * (DURATION_S + 1));
    await run(1, body);
    const server0 = processCpu(server.pid);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    const r = await run(DURATION_S, body);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const serverCpu = cpuDelta(server.pid, server0, processCpu(server.pid));
    if (r.failed > 0) process.stderr.write(`${label}: ${r.failed} calls failed\n`);
    r.latencies.sort((a, b) => a - b);
    const calls = Math.max(1, r.sent);
    return {
      label,
      requests: r.latencies.length,
      seconds,
      p50ms: percentile(r.latencies, 50),
      p99ms: percentile(r.latencies, 99),
      cpuUsPerCall: serverCpu.totalUs / calls,
      note:
        `main thread ${(serverCpu.mainUs / calls).toFixed(0)} µs, busiest other thread ` +
        `${(serverCpu.busiestOtherUs / calls).toFixed(0)} µs; grpc-js client ` +
        `${((cpu.user + cpu.system) / calls).toFixed(0)} µs CPU/call`,
    };
  } finally {
    client.close();
  }
}

type WatchStream = (
  req: unknown,
  metadata: grpcJs.Metadata,
  options: grpcJs.CallOptions,
) => grpcJs.ClientReadableStream<SendTransactionStatus>;

interface WatchEnd {
  /** The last status streamed ('' if none). */
  readonly status: string;
  /** performance.now() when INCLUDED arrived. */
  readonly includedAtMs?: number;
}

/**
 * eth_send_transaction through SendEthTransaction to anvil, closed loop: the throughput and latency
 * of acknowledgements (nonce allocated, transaction signed and recorded). One acknowledged send in
 * SEND_WATCH_SAMPLE is followed with WatchSendTransaction while the load runs, for the time from
 * submission to INCLUDED (watching every one would add a polling load of its own to what is
 * measured). After the run, the last acknowledged send is followed to its end (the service
 * broadcasts one sender's sends in nonce order), then every send's status is read once to count
 * how many were INCLUDED.
 */
async function measureSends(grpc: string, pid: number, from: string): Promise<Result> {
  const definition = protoLoader.loadSync(loadSignerProto().protoFile, LOADER_OPTIONS);
  const pkg = grpcJs.loadPackageDefinition(definition) as unknown as {
    countersign: { v1: { Signer: grpcJs.ServiceClientConstructor } };
  };
  const watcher = new pkg.countersign.v1.Signer(grpc, grpcJs.credentials.createInsecure());
  const watchStream = (watcher as unknown as Record<string, WatchStream>)[
    'WatchSendTransaction'
  ] as WatchStream;
  const open = new Set<grpcJs.ClientReadableStream<SendTransactionStatus>>();
  /** Follows one send until it ends or `withinMs` passes. */
  const follow = (sendTransactionStatusId: string, withinMs: number) =>
    new Promise<WatchEnd>((resolve) => {
      let status = '';
      let includedAtMs: number | undefined;
      const call = watchStream.call(
        watcher,
        { sendTransactionStatusId, pollIntervalMs: WATCH_POLL_MS },
        new grpcJs.Metadata(),
        { deadline: Date.now() + withinMs },
      );
      open.add(call);
      call.on('data', (m: SendTransactionStatus) => {
        status = m.status;
        if (m.status === 'SEND_TRANSACTION_STATUS_CODE_INCLUDED') includedAtMs ??= performance.now();
      });
      call.on('error', () => {});
      call.on('status', () => {
        open.delete(call);
        resolve(includedAtMs === undefined ? { status } : { status, includedAtMs });
      });
    });
  let n = 0;
  const acked: string[] = [];
  const sampled: Promise<number | undefined>[] = [];
  const onOk = (_: number, message: Buffer, startedMs: number) => {
    const { sendTransactionStatusId } = SendEthTransactionResponse.toObject(
      SendEthTransactionResponse.decode(message),
    ) as { sendTransactionStatusId: string };
    acked.push(sendTransactionStatusId);
    if (acked.length % SEND_WATCH_SAMPLE === 1)
      sampled.push(
        follow(sendTransactionStatusId, SWEEP_TIMEOUT_MS).then(
          (e) => e.includedAtMs && e.includedAtMs - startedMs,
        ),
      );
  };
  const load = (seconds: number, onOk?: (i: number, m: Buffer, startedMs: number) => void) =>
    runLoad({
      authority: grpc,
      path: '/countersign.v1.Signer/SendEthTransaction',
      body: () => sendRequest(from, n++),
      shape: { kind: 'closed', concurrency: SEND_IN_FLIGHT },
      seconds,
      connections: 4,
      ...(onOk === undefined ? {} : { onOk }),
    });
  try {
    await load(2); // warm-up: JIT, connections, SQLite pages, the chain client
    const server0 = processCpu(pid);
    const cpu0 = process.cpuUsage();
    const r = await load(DURATION_S, onOk);
    const cpu = process.cpuUsage(cpu0);
    const serverCpu = cpuDelta(pid, server0, processCpu(pid));
    if (r.failed > 0) process.stderr.write(`eth_send_transaction: ${r.failed} calls failed\n`);
    const drainStarted = performance.now();
    // The sampled watches end as their sends are included; they hold watch streams, of which the
    // daemon allows 32 per caller, so they end before the sweep below needs those streams.
    const inclusion = (await Promise.all(sampled)).filter((t): t is number => t !== undefined);
    const lastId = acked.at(-1);
    const last = lastId === undefined ? undefined : await follow(lastId, SWEEP_TIMEOUT_MS);
    const drainS = (performance.now() - drainStarted) / 1000;
    // One read each: a terminal send answers at once; one still pending is cut after READ_WITHIN_MS,
    // or at once when the last send never got in (then the others are stuck behind a nonce, and
    // waiting on each would take minutes).
    const within = last?.status === 'SEND_TRANSACTION_STATUS_CODE_INCLUDED' ? READ_WITHIN_MS : 250;
    const ends: WatchEnd[] = [];
    for (let k = 0; k < acked.length; k += SWEEP_BATCH)
      ends.push(...(await Promise.all(acked.slice(k, k + SWEEP_BATCH).map((id) => follow(id, within)))));
    const included = ends.filter((e) => e.status === 'SEND_TRANSACTION_STATUS_CODE_INCLUDED').length;
    inclusion.sort((a, b) => a - b);
    return {
      label: `eth_send_transaction via gRPC SendEthTransaction to anvil, ${SEND_IN_FLIGHT} in flight`,
      requests: r.ok,
      seconds: r.seconds,
      p50ms: percentile(r.latencies, 50),
      p99ms: percentile(r.latencies, 99),
      // The broadcaster's work during the run counts too; its work after the run does not.
      cpuUsPerCall: serverCpu.totalUs / Math.max(1, r.sent),
      note:
        `INCLUDED ${included} of ${acked.length} (the last ${drainS.toFixed(1)} s after the run); ` +
        `submit to INCLUDED p50 ${percentile(inclusion, 50).toFixed(0)} ms, p99 ${percentile(inclusion, 99).toFixed(0)} ms ` +
        `(1 send in ${SEND_WATCH_SAMPLE} watched, ${WATCH_POLL_MS} ms polls); ` +
        `bench client ${((cpu.user + cpu.system) / Math.max(1, r.sent)).toFixed(0)} µs CPU/call`,
    };
  } finally {
    for (const call of open) call.cancel();
    watcher.close();
  }
}

async function sendGroup(): Promise<Result[]> {
  // Automine plus a block each second: under this load anvil's automine alone sometimes leaves a
  // send it has accepted unmined for good (its pool files it as queued although the account's
  // nonce has reached it; foundry-rs/foundry#10122), and every later nonce waits behind it. The
  // interval block re-runs the pool's bookkeeping and mines it. Inclusion figures are unchanged:
  // automine still mines each send as it arrives.
  const anvil = await startAnvil({ args: ['--mixed-mining', '--block-time', '1'] });
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-send-'));
  try {
    const server = await startServe(
      [
        '--data-dir',
        join(dir, 'data'),
        '--log-level',
        'warn',
        '--chain-rpc',
        `${SEND_CAIP2}=${anvil.rpcUrl}`,
      ],
      ALLOCATOR.env,
      SERVE_OPTIONS,
    );
    try {
      const from = server.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address;
      if (from === undefined) throw new Error('the default wallet has no Ethereum account');
      const res = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'anvil_setBalance',
          params: [from, '0xd3c21bcecceda1000000'],
        }),
      });
      if (!res.ok) throw new Error(`anvil_setBalance answered HTTP ${res.status}`);
      return [await measureSends(server.ready.grpc, server.proc.pid as number, from)];
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
  } finally {
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function signGroup(): Promise<Result[]> {
  const results: Result[] = [];
  // The viem line runs with the Ethereum 64-in-flight line (the ratio is printed on it); the
  // half-of-peak line needs that line's rate.
  const wantHalf = selected(HALF_LABEL);
  const wantPeak = selected(PEAK_LABEL) || wantHalf;
  const viem = selected(VIEM_LABEL) || wantPeak ? viemLoop() : undefined;
  await viem?.warm(WARMUP_S);
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
  const server = await startServe(
    ['--data-dir', join(dir, 'data'), '--log-level', 'warn'],
    ALLOCATOR.env,
    SERVE_OPTIONS,
  );
  try {
    const account = (format: string) =>
      server.ready.accounts?.find((a) => a.addressFormat === format)?.address as string;
    const eth = account('ADDRESS_FORMAT_ETHEREUM');
    const sol = account('ADDRESS_FORMAT_SOLANA');
    const tron = account('ADDRESS_FORMAT_TRON');
    const btc = account('ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH');
    const g = { grpc: server.ready.grpc, pid: server.proc.pid as number };
    const closed = (concurrency: number): LoadShape => ({ kind: 'closed', concurrency });
    const st = MODE.SIGN_TRANSACTION;
    if (WARMUP_S > 0) {
      // The process's warm-up (see the head of the file): every chain's SignTransaction in turn.
      const chains = [
        (i: number) => ethereumRequest(eth, st, i),
        (i: number) => solanaRequest(sol, st, i),
        (i: number) => tronRequest(tron, st, i),
        (i: number) => bitcoinRequest(btc, st, i),
        (i: number) => tempoRequest(eth, st, i),
      ];
      const warm = await runLoad({
        authority: g.grpc,
        path: '/countersign.v1.Signer/SignTransaction',
        body: () => {
          const i = nonce++;
          return (chains[i % chains.length] as (i: number) => Buffer)(i);
        },
        shape: closed(64),
        seconds: WARMUP_S,
        connections: 4,
      });
      if (warm.failed > 0) process.stderr.write(`warm-up: ${warm.failed} calls failed\n`);
    }
    const line = async (
      label: string,
      request: (i: number) => Buffer,
      shape: LoadShape,
      force = false,
      interleave?: Interleave,
    ): Promise<Result | undefined> => {
      if (!force && !selected(label)) return undefined;
      const r = await measure(label, g, request, shape, interleave);
      results.push(r);
      return r;
    };
    await line(
      'Ethereum EIP-1559, SIGN_TRANSACTION, 1 in flight',
      (i) => ethereumRequest(eth, st, i),
      closed(1),
    );
    const sequential = 'Ethereum EIP-1559, SIGN_TRANSACTION, one after another, @grpc/grpc-js client';
    if (selected(sequential))
      results.push(await measureGrpcJsSequential(sequential, g, (i) => ethereumRequest(eth, st, i)));
    // The ratio's two rates are measured in alternating slices (viem's loop, then this line), so
    // both see the same weather of a shared machine (measured a minute apart, the ratio ranged
    // from 0.56x to 1.70x within one hour on one tree: bench/PROFILE.md, stop 37).
    const slices = Math.max(1, Math.floor(DURATION_S / 2));
    const peak = await line(
      PEAK_LABEL,
      (i) => ethereumRequest(eth, st, i),
      closed(64),
      wantPeak,
      viem === undefined ? undefined : { slices, between: (s) => viem.measure(s) },
    );
    if (viem !== undefined) {
      if (peak === undefined) await viem.measure(DURATION_S);
      const v = viem.result();
      results.unshift(v);
      if (peak !== undefined) {
        const ratio = peak.requests / peak.seconds / (v.requests / v.seconds);
        const how = slices > 1 ? `, in ${slices} alternating slices` : '';
        peak.note = `${ratio.toFixed(2)}× viem's rate in this run${how}; ${peak.note ?? ''}`;
      }
    }
    await line(
      'Ethereum EIP-1559, SIGN_RAW_PAYLOADS, 64 in flight',
      (i) => ethereumRequest(eth, MODE.SIGN_RAW_PAYLOADS, i),
      closed(64),
    );
    if (peak !== undefined && wantHalf) {
      const half = Math.floor(peak.requests / peak.seconds / 2);
      await line(`${HALF_LABEL}: ${half}/s offered, open loop`, (i) => ethereumRequest(eth, st, i), {
        kind: 'open',
        rate: half,
        maxInFlight: 64,
      });
    }
    await line('Solana System transfer (legacy), 64 in flight', (i) => solanaRequest(sol, st, i), closed(64));
    await line('Tron TRX transfer, 64 in flight', (i) => tronRequest(tron, st, i), closed(64));
    await line('Bitcoin PSBT, 1 P2WPKH input, 64 in flight', (i) => bitcoinRequest(btc, st, i), closed(64));
    await line('Tempo 0x76 call, 64 in flight', (i) => tempoRequest(eth, st, i), closed(64));
  } finally {
    server.proc.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

async function main(): Promise<void> {
  const results: Result[] = [];
  if (runs('sign')) results.push(...(await signGroup()));
  if (runs('send') && selected('eth_send_transaction')) results.push(...(await sendGroup()));

  process.stdout.write(`\nThe server's allocator: ${ALLOCATOR.description}.\n`);
  process.stdout.write(
    '\n| run (gRPC, full path, embedded) | calls | throughput (/s) | p50 (ms) | p99 (ms) | CPU per call (µs) | note |\n|---|---:|---:|---:|---:|---:|---|\n',
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.label} | ${r.requests} | ${(r.requests / r.seconds).toFixed(0)} | ${r.p50ms.toFixed(3)} | ${r.p99ms.toFixed(3)} | ${r.cpuUsPerCall === undefined ? '' : r.cpuUsPerCall.toFixed(0)} | ${r.note ?? ''} |\n`,
    );
}

await main();
