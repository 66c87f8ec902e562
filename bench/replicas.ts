/**
 * `npm run bench:replicas`: the sign benchmark line of `npm run bench` (gRPC SignTransaction,
 * Ethereum EIP-1559, 64 calls in flight, full path: gRPC → daemon → stamped request → service → sign
 * → store → verify) in one run on three stores: SQLite (the embedded default), PostgreSQL with one
 * `serve` replica, and PostgreSQL with two replicas on one database (the 64 calls split over both
 * replicas' daemons, 32 each). Same load generator as bench/run.ts (bench/load.ts).
 *
 * PostgreSQL: a fresh database on COUNTERSIGN_TEST_PG (default postgres://postgres@127.0.0.1:5432),
 * dropped afterwards. Prints throughput and p50/p99 latency. Not a test: nothing here asserts a time.
 * BENCH_SECONDS sets each run's length.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../test/helpers/pgdb.js';
import { startServe, type ServeProcess } from '../test/helpers/serve.js';
import { runLoad, type LoadResult } from './load.js';
import { ethereumRequest, MODE, percentile } from './requests.js';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const IN_FLIGHT = 64;

interface Line {
  readonly label: string;
  readonly ok: number;
  readonly failed: number;
  readonly seconds: number;
  readonly latencies: number[];
}

let nonce = 0;

/** The load split over the replicas' gRPC addresses, run at once; results merged. */
async function measure(label: string, targets: readonly { grpc: string; signWith: string }[]): Promise<Line> {
  const load = (seconds: number) =>
    Promise.all(
      targets.map((t) =>
        runLoad({
          authority: t.grpc,
          path: '/countersign.v1.Signer/SignTransaction',
          body: () => ethereumRequest(t.signWith, MODE.SIGN_TRANSACTION, nonce++),
          shape: { kind: 'closed', concurrency: IN_FLIGHT / targets.length },
          seconds,
          connections: 4,
        }),
      ),
    );
  await load(2); // warm-up: JIT, connections, store pages and pools
  const results: LoadResult[] = await load(DURATION_S);
  return {
    label,
    ok: results.reduce((n, r) => n + r.ok, 0),
    failed: results.reduce((n, r) => n + r.failed, 0),
    seconds: Math.max(...results.map((r) => r.seconds)),
    latencies: results.flatMap((r) => r.latencies).sort((a, b) => a - b),
  };
}

const ethOf = (s: ServeProcess): string =>
  s.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;

async function stop(servers: readonly ServeProcess[]): Promise<void> {
  for (const s of servers) s.proc.kill('SIGTERM');
  await Promise.all(servers.map((s) => s.exited));
}

async function main(): Promise<void> {
  const lines: Line[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-replicas-'));
  const args = ['--log-level', 'warn'];
  try {
    // SQLite, the embedded default.
    const lite = await startServe(['--data-dir', join(dir, 'sqlite'), ...args]);
    try {
      lines.push(await measure('SQLite, 1 process', [{ grpc: lite.ready.grpc, signWith: ethOf(lite) }]));
    } finally {
      await stop([lite]);
    }

    const db = await createTestDatabase('cs_bench');
    const env = { COUNTERSIGN_MASTER_KEY: randomBytes(32).toString('hex') };
    try {
      const first = join(dir, 'pg1');
      const one = await startServe(['--store', db.url, '--data-dir', first, ...args], env);
      try {
        lines.push(await measure('PostgreSQL, 1 replica', [{ grpc: one.ready.grpc, signWith: ethOf(one) }]));
      } finally {
        await stop([one]);
      }
      // Two replicas on the same database: the second data dir gets the first one's credentials.
      const second = join(dir, 'pg2');
      mkdirSync(second, { mode: 0o700 });
      for (const f of ['credentials.json', 'daemon-signer.json'])
        copyFileSync(join(first, f), join(second, f));
      const two = await Promise.all(
        [first, second].map((d) => startServe(['--store', db.url, '--data-dir', d, ...args], env)),
      );
      try {
        lines.push(
          await measure(
            'PostgreSQL, 2 replicas (32 in flight each)',
            two.map((s) => ({ grpc: s.ready.grpc, signWith: ethOf(s) })),
          ),
        );
      } finally {
        await stop(two);
      }
    } finally {
      await db.drop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  process.stdout.write(
    `\n| Ethereum EIP-1559, SIGN_TRANSACTION, ${IN_FLIGHT} in flight (gRPC, full path) | calls | failed | throughput (/s) | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|---:|\n`,
  );
  for (const l of lines)
    process.stdout.write(
      `| ${l.label} | ${l.ok} | ${l.failed} | ${(l.ok / l.seconds).toFixed(0)} | ${percentile(l.latencies, 50).toFixed(3)} | ${percentile(l.latencies, 99).toFixed(3)} |\n`,
    );
}

await main();
