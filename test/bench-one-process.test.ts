/**
 * The one-process benchmarks (bench/daemon-sign.ts, bench/service-sign.ts) still run against the
 * code as it is: a few calls each, through the real embedded service. daemon-sign throws on a
 * transaction that does not verify for the expected signer, service-sign on an answer that carries
 * no signed transaction, so a run that exits 0 and prints its figures means every call was signed.
 * Nothing here reads the figures themselves (no timing is asserted).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function bench(file: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return stdout;
}

describe('one-process benchmarks', () => {
  it('service-sign answers every stamped sign_transaction and times the statements', async () => {
    const out = await bench('bench/service-sign.ts', {
      BENCH_WARMUP_CALLS: '20',
      BENCH_CALLS: '100',
      BENCH_ROUNDS: '2',
      BENCH_IN_FLIGHT: '8',
      BENCH_STATEMENTS: '1',
    });
    const rounds = out.match(
      /^service work: [\d.]+ µs CPU per call \(process\), \d+ µs \(service thread\), \d+\/s \(100 calls, 8 in flight\)$/gm,
    );
    expect(rounds).toHaveLength(2);
    // Every call records its activity, vote and policy evaluation: one insert each per call.
    for (const table of ['activities', 'votes', 'policy_evaluations']) {
      const row = out.split('\n').find((l) => l.includes(`INSERT INTO ${table} (`));
      expect(row, `no statement line for ${table}`).toBeDefined();
      expect(row?.split('|')[2]?.trim()).toBe('1.00');
    }
  }, 120_000);

  it('daemon-sign signs and verifies against the recorded answers', async () => {
    const out = await bench('bench/daemon-sign.ts', { BENCH_CALLS: '200', BENCH_ROUNDS: '1' });
    expect(out).toMatch(/^daemon work: [\d.]+ µs CPU per call \(200 calls\)$/m);
  }, 120_000);
});
