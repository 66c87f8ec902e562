/**
 * `npm run bench`: gRPC SignTransaction (EIP-1559) through `countersign serve` on the embedded
 * default, full path (gRPC → daemon → stamped request → service → sign → store → verify), driven by
 * a raw HTTP/2 load generator (bench/load.ts) whose own CPU cost per call is measured and printed;
 * and, in the same run, viem's in-process `privateKeyToAccount(...).signTransaction` loop.
 * Every call signs a different transaction (its own nonce), so nothing is answered from the
 * service's idempotency cache.
 *
 * Prints throughput and p50/p99 latency. Not a test: nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { startServe } from '../test/helpers/serve.js';
import { runLoad, type LoadShape } from './load.js';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);

// --- a hand-rolled protobuf encoder: just enough for SignTransactionRequest ---
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
const str = (field: number, s: string) => {
  const b = Buffer.from(s);
  return Buffer.from([...varint((field << 3) | 2), ...varint(b.length), ...b]);
};
const num = (field: number, n: number) => Buffer.from([...varint(field << 3), ...varint(n)]);
const msg = (field: number, body: Buffer) =>
  Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(body.length)]), body]);

function signTransactionRequest(signWith: string, mode: number, nonce: number): Buffer {
  const eth = Buffer.concat([
    num(2, 3), // EIP1559
    str(3, '31337'),
    str(4, String(nonce)),
    str(5, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'),
    str(6, '1000000000000000'),
    str(8, '21000'),
    str(10, '2000000000'),
    str(11, '1000000000'),
  ]);
  const req = Buffer.concat([str(2, signWith), num(4, mode), msg(10, eth)]);
  // gRPC length-prefixed message: uncompressed flag + 4-byte big-endian length.
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(req.length, 1);
  return Buffer.concat([frame, req]);
}

interface Result {
  label: string;
  requests: number;
  seconds: number;
  p50ms: number;
  p99ms: number;
  note?: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function viemBaseline(): Promise<Result> {
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
  const lat: number[] = [];
  const end = performance.now() + DURATION_S * 1000;
  let n = 0;
  while (performance.now() < end) {
    const t = performance.now();
    await account.signTransaction({ ...tx, nonce: n++ });
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  return {
    label: 'viem privateKeyToAccount().signTransaction, in-process loop',
    requests: n,
    seconds: DURATION_S,
    p50ms: percentile(lat, 50),
    p99ms: percentile(lat, 99),
  };
}

let nonce = 0;

async function measure(
  label: string,
  grpc: string,
  signWith: string,
  mode: number,
  shape: LoadShape,
): Promise<Result> {
  const load = (seconds: number) =>
    runLoad({
      authority: grpc,
      path: '/countersign.v1.Signer/SignTransaction',
      body: () => signTransactionRequest(signWith, mode, nonce++),
      shape,
      seconds,
      connections: shape.kind === 'closed' ? Math.min(4, shape.concurrency) : 4,
    });
  await load(2); // warm-up: JIT, connections, SQLite pages
  const cpu0 = process.cpuUsage();
  const r = await load(DURATION_S);
  const cpu = process.cpuUsage(cpu0);
  const clientUs = (cpu.user + cpu.system) / Math.max(1, r.sent);
  if (r.failed > 0) process.stderr.write(`${label}: ${r.failed} calls failed\n`);
  return {
    label,
    requests: r.ok,
    seconds: r.seconds,
    p50ms: percentile(r.latencies, 50),
    p99ms: percentile(r.latencies, 99),
    note: `load generator ${clientUs.toFixed(0)} µs CPU/call`,
  };
}

async function main(): Promise<void> {
  const results: Result[] = [await viemBaseline()];
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
  const server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'warn']);
  try {
    const eth = server.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
      ?.address as string;
    const g = server.ready.grpc;
    results.push(
      await measure('gRPC SignTransaction EIP-1559, SIGN_TRANSACTION, 1 in flight', g, eth, 1, {
        kind: 'closed',
        concurrency: 1,
      }),
    );
    const peak = await measure('gRPC SignTransaction EIP-1559, SIGN_TRANSACTION, 64 in flight', g, eth, 1, {
      kind: 'closed',
      concurrency: 64,
    });
    results.push(peak);
    results.push(
      await measure('gRPC SignTransaction EIP-1559, SIGN_RAW_PAYLOADS, 64 in flight', g, eth, 2, {
        kind: 'closed',
        concurrency: 64,
      }),
    );
    const half = Math.floor(peak.requests / peak.seconds / 2);
    results.push(
      await measure(`gRPC SignTransaction EIP-1559, half of peak: ${half}/s offered, open loop`, g, eth, 1, {
        kind: 'open',
        rate: half,
        maxInFlight: 64,
      }),
    );
  } finally {
    server.proc.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }

  process.stdout.write(
    '\n| run | calls | throughput (/s) | p50 (ms) | p99 (ms) | note |\n|---|---:|---:|---:|---:|---|\n',
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.label} | ${r.requests} | ${(r.requests / r.seconds).toFixed(0)} | ${r.p50ms.toFixed(3)} | ${r.p99ms.toFixed(3)} | ${r.note ?? ''} |\n`,
    );
}

await main();
