/**
 * `node --import tsx bench/interleaved.ts`: an A/B of two variants of the server inside one run,
 * for changes too small to show between two runs on a shared machine (where the same tree moves
 * ±20–30% from one run to the next).
 *
 * The server is started with BENCH_AB_SLOT_MS in its environment. The change under test, patched
 * in for the experiment and not committed, takes its B branch while
 * `Math.floor(Date.now() / Number(process.env.BENCH_AB_SLOT_MS)) % 2 === 1` and its A branch
 * otherwise, so the variant switches every slot. This client classifies each SignTransaction
 * (Ethereum EIP-1559) by the same clock at its start, so both variants share whatever the machine
 * is doing; calls that straddle a switch fall in the slot they started in.
 *
 * Load: BENCH_AB_IN_FLIGHT calls in flight (default 1), or BENCH_AB_RATE calls a second offered in
 * an open loop; BENCH_AB_SECONDS (default 30) after 5 s at 64 in flight. With BENCH_AB_SERVER_SLOT_MS=0
 * the server never switches (an A/A run: the noise between the two halves of one run).
 * Not a test: nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../test/helpers/serve.js';
import { serverAllocator } from './allocator.js';
import { runLoad, type LoadShape } from './load.js';
import { ethereumSignCalls, percentile } from './requests.js';

const SLOT_MS = Number(process.env.BENCH_AB_SLOT_MS ?? 250);
const SECONDS = Number(process.env.BENCH_AB_SECONDS ?? 30);
const IN_FLIGHT = Number(process.env.BENCH_AB_IN_FLIGHT ?? 1);
const RATE = process.env.BENCH_AB_RATE === undefined ? undefined : Number(process.env.BENCH_AB_RATE);
if (!(SLOT_MS > 0)) throw new Error('BENCH_AB_SLOT_MS must be a positive number of milliseconds');

const ms = (sorted: readonly number[], p: number) => percentile(sorted, p).toFixed(3);

const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-ab-'));
const allocator = serverAllocator();
const server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'warn'], {
  ...allocator.env,
  BENCH_AB_SLOT_MS: process.env.BENCH_AB_SERVER_SLOT_MS ?? String(SLOT_MS),
});
try {
  const base = ethereumSignCalls(server, 1);
  await runLoad({ ...base, shape: { kind: 'closed', concurrency: 64 }, seconds: 5 });
  const shape: LoadShape =
    RATE === undefined
      ? { kind: 'closed', concurrency: IN_FLIGHT }
      : { kind: 'open', rate: RATE, maxInFlight: 256 };
  const byVariant: [number[], number[]] = [[], []];
  const result = await runLoad({
    ...base,
    shape,
    seconds: SECONDS,
    onOk: (_i, _message, startedMs) => {
      const variant = Math.floor((performance.timeOrigin + startedMs) / SLOT_MS) % 2;
      byVariant[variant as 0 | 1].push(performance.now() - startedMs);
    },
  });
  const load = RATE === undefined ? `${IN_FLIGHT} in flight` : `${RATE}/s offered`;
  console.log(
    `${load}, ${SLOT_MS} ms slots, ${result.seconds.toFixed(1)} s, ${result.failed} failed; the server's allocator: ${allocator.description}`,
  );
  for (const [i, name] of ['A', 'B'].entries()) {
    const l = byVariant[i as 0 | 1].sort((a, b) => a - b);
    console.log(
      `${name}: ${l.length} calls; ms p10 ${ms(l, 10)} p50 ${ms(l, 50)} p90 ${ms(l, 90)} p99 ${ms(l, 99)}`,
    );
  }
} finally {
  server.proc.kill('SIGTERM');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
