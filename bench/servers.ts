/**
 * `node --import tsx bench/servers.ts`: an A/B of two `serve` processes that differ in their
 * environment or node's options (an allocator, a V8 flag), loaded in alternating slices so both
 * see the same machine. bench/interleaved.ts compares two variants of the code inside one server;
 * what must be fixed when a process starts (LD_PRELOAD, GC flags) needs two servers, and a minute
 * apart the same server moves more on a shared machine than most such changes.
 *
 * BENCH_SERVERS_A and BENCH_SERVERS_B each list space-separated tokens: `NAME=value` is set in that
 * server's environment (on top of the benches' allocator, allocator.ts), `--flag` is passed to its
 * node. Both default to nothing (an A/A run: the noise of the method). Ethereum EIP-1559
 * SignTransaction; each server first serves BENCH_SERVERS_WARMUP_SECONDS (default 8) at 64 in
 * flight, then BENCH_SERVERS_SLICES (default 10) turns of one 2 s slice per server (their order
 * swapped every turn, each slice led by 0.5 s unmeasured), at BENCH_SERVERS_IN_FLIGHT calls in
 * flight (default 64) or at BENCH_SERVERS_RATE calls a second offered in an open loop. Prints per
 * server: calls a second, its CPU per call, and latency percentiles. Not a test: nothing here
 * asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe, type ServeProcess } from '../test/helpers/serve.js';
import { serverAllocator } from './allocator.js';
import { runLoad, type LoadShape } from './load.js';
import { processCpu } from './proc-cpu.js';
import { ethereumSignCalls, percentile } from './requests.js';

const SLICES = Number(process.env.BENCH_SERVERS_SLICES ?? 10);
const RATE = process.env.BENCH_SERVERS_RATE;
const IN_FLIGHT = Number(process.env.BENCH_SERVERS_IN_FLIGHT ?? 64);
const WARMUP_S = Number(process.env.BENCH_SERVERS_WARMUP_SECONDS ?? 8);
const shape: LoadShape =
  RATE === undefined
    ? { kind: 'closed', concurrency: IN_FLIGHT }
    : { kind: 'open', rate: Number(RATE), maxInFlight: 256 };

interface Variant {
  readonly name: string;
  readonly env: Record<string, string>;
  readonly nodeArgs: string[];
}

/** `NAME=value` and `--flag` tokens; anything else is refused. */
function parseVariant(name: string, spec: string): Variant {
  const env: Record<string, string> = {};
  const nodeArgs: string[] = [];
  for (const token of spec.split(' ').filter((t) => t !== '')) {
    if (token.startsWith('--')) nodeArgs.push(token);
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(token)) {
      const eq = token.indexOf('=');
      env[token.slice(0, eq)] = token.slice(eq + 1);
    } else throw new Error(`BENCH_SERVERS_${name}: '${token}' is neither NAME=value nor --flag`);
  }
  return { name, env, nodeArgs };
}

interface Tally {
  ok: number;
  failed: number;
  s: number;
  us: number;
  latencies: number[];
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function main(): Promise<void> {
  const allocator = serverAllocator();
  const variants = [
    parseVariant('A', process.env.BENCH_SERVERS_A ?? ''),
    parseVariant('B', process.env.BENCH_SERVERS_B ?? ''),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-servers-'));
  const servers: ServeProcess[] = [];
  try {
    for (const v of variants)
      servers.push(
        await startServe(
          ['--data-dir', join(dir, v.name), '--log-level', 'warn'],
          { ...allocator.env, ...v.env },
          { nodeArgs: v.nodeArgs },
        ),
      );
    const runs = servers.map((server) => {
      const tally: Tally = { ok: 0, failed: 0, s: 0, us: 0, latencies: [] };
      return { pid: server.proc.pid as number, base: ethereumSignCalls(server, 4), tally };
    });
    for (const r of runs)
      await runLoad({ ...r.base, shape: { kind: 'closed', concurrency: 64 }, seconds: WARMUP_S });
    for (let k = 0; k < SLICES; k++) {
      for (const r of k % 2 === 0 ? runs : [...runs].reverse()) {
        await runLoad({ ...r.base, shape, seconds: 0.5 });
        const cpu0 = total(processCpu(r.pid));
        const result = await runLoad({ ...r.base, shape, seconds: 2 });
        r.tally.us += total(processCpu(r.pid)) - cpu0;
        r.tally.ok += result.ok;
        r.tally.failed += result.failed;
        r.tally.s += result.seconds;
        r.tally.latencies.push(...result.latencies);
      }
    }
    const load = RATE === undefined ? `${IN_FLIGHT} in flight` : `${RATE}/s offered`;
    console.log(
      `${load}, ${SLICES} slices of 2 s per server; the allocator under both: ${allocator.description}`,
    );
    variants.forEach((v, i) => {
      const t = (runs[i] as (typeof runs)[number]).tally;
      const l = t.latencies.sort((a, b) => a - b);
      const ms = (p: number) => percentile(l, p).toFixed(3);
      const spec = [...Object.entries(v.env).map(([k, x]) => `${k}=${x}`), ...v.nodeArgs].join(' ');
      console.log(
        `${v.name} (${spec === '' ? 'as is' : spec}): ${(t.ok / t.s).toFixed(0)}/s (${t.failed} failed), ` +
          `server ${(t.us / Math.max(1, t.ok + t.failed)).toFixed(0)} µs CPU/call; ` +
          `ms p50 ${ms(50)} p90 ${ms(90)} p99 ${ms(99)}`,
      );
    });
  } finally {
    for (const s of servers) {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
