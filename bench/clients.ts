/**
 * `node --import tsx bench/clients.ts`: the load generator's two clients (load.ts: HTTP/2 framed
 * by hand, and node:http2 with BENCH_CLIENT=node-http2) against one `serve`, in alternating slices,
 * so both see the same machine. It measures the apparatus, not the path: what a client's own CPU
 * takes from a server on the same two cores, in the server's rate and latency.
 *
 * Ethereum EIP-1559 SignTransaction; after 8 s at 64 in flight, BENCH_CLIENTS_SLICES (default 10)
 * turns of one 2 s slice per client (their order swapped every turn, each led by 0.5 s unmeasured),
 * at BENCH_CLIENTS_IN_FLIGHT calls in flight (default 64), or at BENCH_CLIENTS_RATE calls a second
 * offered in an open loop. Prints per client: calls a second, the server's CPU per call, the
 * client's own CPU per call, and latency percentiles. Not a test: nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../test/helpers/serve.js';
import { serverAllocator } from './allocator.js';
import { runLoad, type LoadShape } from './load.js';
import { processCpu } from './proc-cpu.js';
import { ethereumSignCalls, percentile } from './requests.js';

const SLICES = Number(process.env.BENCH_CLIENTS_SLICES ?? 10);
const RATE = process.env.BENCH_CLIENTS_RATE;
const shape: LoadShape =
  RATE === undefined
    ? { kind: 'closed', concurrency: Number(process.env.BENCH_CLIENTS_IN_FLIGHT ?? 64) }
    : { kind: 'open', rate: Number(RATE), maxInFlight: 256 };
const CLIENTS = ['lean', 'node-http2'] as const;

interface Sum {
  ok: number;
  failed: number;
  s: number;
  serverUs: number;
  clientUs: number;
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-clients-'));
const allocator = serverAllocator();
const server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'warn'], allocator.env);
const saved = process.env.BENCH_CLIENT;
try {
  const pid = server.proc.pid as number;
  const base = ethereumSignCalls(server, 4);
  await runLoad({ ...base, shape: { kind: 'closed', concurrency: 64 }, seconds: 8 });
  const sums = new Map<string, Sum>(
    CLIENTS.map((c) => [c, { ok: 0, failed: 0, s: 0, serverUs: 0, clientUs: 0 }]),
  );
  const latencies = new Map<string, number[]>(CLIENTS.map((c) => [c, []]));
  for (let k = 0; k < SLICES; k++) {
    for (const client of k % 2 === 0 ? CLIENTS : [...CLIENTS].reverse()) {
      process.env.BENCH_CLIENT = client;
      await runLoad({ ...base, shape, seconds: 0.5 });
      const server0 = total(processCpu(pid));
      const cpu0 = process.cpuUsage();
      const r = await runLoad({ ...base, shape, seconds: 2 });
      const cpu = process.cpuUsage(cpu0);
      const sum = sums.get(client) as Sum;
      sum.ok += r.ok;
      sum.failed += r.failed;
      sum.s += r.seconds;
      sum.serverUs += total(processCpu(pid)) - server0;
      sum.clientUs += cpu.user + cpu.system;
      (latencies.get(client) as number[]).push(...r.latencies);
    }
  }
  const load =
    RATE === undefined
      ? `${shape.kind === 'closed' ? shape.concurrency : ''} in flight`
      : `${RATE}/s offered`;
  console.log(
    `${load}, ${SLICES} slices of 2 s per client; the server's allocator: ${allocator.description}`,
  );
  for (const client of CLIENTS) {
    const sum = sums.get(client) as Sum;
    const l = (latencies.get(client) as number[]).sort((a, b) => a - b);
    const calls = Math.max(1, sum.ok + sum.failed);
    const perCall = (us: number) => (us / calls).toFixed(0);
    const ms = (p: number) => percentile(l, p).toFixed(3);
    console.log(
      `${client}: ${(sum.ok / sum.s).toFixed(0)}/s (${sum.failed} failed); ` +
        `server ${perCall(sum.serverUs)} µs CPU/call, client ${perCall(sum.clientUs)} µs CPU/call; ` +
        `ms p50 ${ms(50)} p90 ${ms(90)} p99 ${ms(99)}`,
    );
  }
} finally {
  if (saved === undefined) delete process.env.BENCH_CLIENT;
  else process.env.BENCH_CLIENT = saved;
  server.proc.kill('SIGTERM');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
