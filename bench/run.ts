/**
 * `npm run bench`: gRPC SignTransaction (EIP-1559) through `countersign serve` on the embedded
 * default, full path (gRPC → daemon → stamped request → service → sign → store → verify), driven by
 * h2load (Debian's nghttp2-client) so the load generator is not the bottleneck; and, in the same
 * run, viem's in-process `privateKeyToAccount(...).signTransaction` loop for comparison.
 *
 * Prints throughput and p50/p99 latency. Not a test: nothing here asserts a time.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { startServe } from '../test/helpers/serve.js';

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

function signTransactionRequest(signWith: string, mode: number): Buffer {
  const eth = Buffer.concat([
    num(2, 3), // EIP1559
    str(3, '31337'),
    str(4, '7'),
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
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function h2load(
  url: string,
  bodyFile: string,
  opts: { clients: number; streams: number; rps?: number; label: string },
  dir: string,
): Result {
  const log = join(dir, `h2load-${opts.label.replace(/\W+/g, '_')}.log`);
  const args = [
    '-D',
    String(DURATION_S),
    '--warm-up-time',
    '2',
    '-c',
    String(opts.clients),
    '-m',
    String(opts.streams),
    '-d',
    bodyFile,
    '-H',
    'content-type: application/grpc',
    '-H',
    'te: trailers',
    '--log-file',
    log,
    ...(opts.rps === undefined ? [] : ['--rps', String(opts.rps)]),
    url,
  ];
  const out = execFileSync('h2load', args, { encoding: 'utf8' });
  const rows = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split('\t'));
  const ok = rows.filter((r) => r[1] === '200');
  const lat = ok.map((r) => Number(r[2]) / 1000).sort((a, b) => a - b);
  const failed = /([0-9]+) failed/.exec(out)?.[1] ?? '?';
  if (failed !== '0')
    process.stderr.write(`h2load reported ${failed} failed requests for ${opts.label}\n${out}\n`);
  return {
    label: opts.label,
    requests: ok.length,
    seconds: DURATION_S,
    p50ms: percentile(lat, 50),
    p99ms: percentile(lat, 99),
  };
}

async function metricCount(apiUrl: string): Promise<number> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const m =
    /countersign_api_requests_total\{route="\/public\/v1\/submit\/sign_transaction",status="200"\} ([0-9]+)/.exec(
      text,
    );
  const r =
    /countersign_api_requests_total\{route="\/public\/v1\/submit\/sign_raw_payloads",status="200"\} ([0-9]+)/.exec(
      text,
    );
  return Number(m?.[1] ?? 0) + Number(r?.[1] ?? 0);
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

async function main(): Promise<void> {
  if (spawnSync('h2load', ['--version']).status !== 0) {
    process.stderr.write('h2load not found: apt-get install -y nghttp2-client\n');
    process.exit(2);
  }
  const results: Result[] = [];

  results.push(await viemBaseline());

  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
  const server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'warn']);
  try {
    const eth = server.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
      ?.address as string;
    const url = `http://${server.ready.grpc}/countersign.v1.Signer/SignTransaction`;
    const signTx = join(dir, 'sign-transaction.bin');
    const rawPayloads = join(dir, 'sign-raw-payloads.bin');
    writeFileSync(signTx, signTransactionRequest(eth, 1));
    writeFileSync(rawPayloads, signTransactionRequest(eth, 2));
    const api = server.ready.api as string;

    const before = await metricCount(api);
    const one = h2load(
      url,
      signTx,
      { clients: 1, streams: 1, label: 'gRPC SignTransaction EIP-1559, SIGN_TRANSACTION, 1 in flight' },
      dir,
    );
    const peak = h2load(
      url,
      signTx,
      { clients: 4, streams: 16, label: 'gRPC SignTransaction EIP-1559, SIGN_TRANSACTION, 64 in flight' },
      dir,
    );
    const raw = h2load(
      url,
      rawPayloads,
      { clients: 4, streams: 16, label: 'gRPC SignTransaction EIP-1559, SIGN_RAW_PAYLOADS, 64 in flight' },
      dir,
    );
    const peakRate = peak.requests / peak.seconds;
    const half = h2load(
      url,
      signTx,
      {
        clients: 4,
        streams: 16,
        rps: Math.max(1, Math.floor(peakRate / 2 / 4)),
        label: `gRPC SignTransaction EIP-1559, half of peak (${Math.floor(peakRate / 2)}/s offered)`,
      },
      dir,
    );
    results.push(one, peak, raw, half);
    const after = await metricCount(api);
    // Every request h2load counted (warm-up included) must have been a signed, recorded activity.
    process.stdout.write(`service recorded ${after - before} signing activities during the gRPC runs\n`);
  } finally {
    server.proc.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }

  process.stdout.write(
    '\n| run | requests | throughput (req/s) | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n',
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.label} | ${r.requests} | ${(r.requests / r.seconds).toFixed(0)} | ${r.p50ms.toFixed(3)} | ${r.p99ms.toFixed(3)} |\n`,
    );
}

await main();
