/**
 * `node --import tsx bench/service-sign.ts`: the service's own work for EIP-1559 sign_transaction
 * activities (the activity `serve`'s daemon submits for SignTransaction), measured in one process
 * without gRPC, the daemon or the worker boundary, so that a change to the service's code shows
 * through the noise of a shared machine. The counterpart of daemon-sign.ts.
 *
 * The real embedded service (SQLite, the WAL synced as in `serve`, the daemon signer's non-root
 * identity with its policy) answers BENCH_CALLS distinct stamped requests per round, BENCH_IN_FLIGHT
 * (default 64) at a time, for BENCH_ROUNDS rounds, after BENCH_WARMUP_CALLS (default 3,000)
 * unmeasured. The requests (bodies and P-256 stamps) are built before each round starts, so the
 * figures are the service's alone: the stamp check, the fingerprint, the policy gate, the
 * reservation, the key's decryption, signing, the completion and the answer's JSON. An answer that
 * does not carry a signed transaction stops the bench with an error. Printed per round: CPU time
 * per call of the whole process (the stamp check runs on libuv's pool, the WAL's fdatasync too)
 * and of the service thread alone (this process's main thread here).
 *
 * BENCH_STATEMENTS=1 also times every SQLite statement (better-sqlite3's run/get/all, wrapped here,
 * not in the store) and prints the costliest, per call and per execution: where the store's time
 * goes. The wrapping costs a little itself, so compare the CPU figures of runs without it.
 * Not a test: nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { serializeTransaction } from 'viem';
import { PublicApiClient } from '../src/client/client.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import { openEmbeddedService } from '../src/service/embedded.js';
import { ANSWER_HEADER, type TransportRequest } from '../src/shared/request-handler.js';
import { threadCpuUs } from './proc-cpu.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
/** In every answer that signed: the completed activity's result (a byte search, not a parse). */
const SIGNED = '"signTransactionResult":{"signedTransaction":"';

/** SQL text → [executions, ns]; filled only with BENCH_STATEMENTS=1. */
const statementTimes = new Map<string, [number, number]>();
if (STATEMENTS) {
  // Every statement of the process is a better-sqlite3 Statement: wrap its prototype's methods.
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all'] as const) {
    const original = proto[method] as (this: Database.Statement, ...a: unknown[]) => unknown;
    proto[method] = function (this: Database.Statement, ...a: unknown[]): unknown {
      const t0 = process.hrtime.bigint();
      try {
        return original.apply(this, a);
      } finally {
        const e = statementTimes.get(this.source) ?? [0, 0];
        e[0]++;
        e[1] += Number(process.hrtime.bigint() - t0);
        statementTimes.set(this.source, e);
      }
    };
  }
}

/** CPU time (µs) of this process's main thread (the service thread here). */
const mainThreadCpuUs = (): number => threadCpuUs(process.pid, String(process.pid));

const dataDir = mkdtempSync(join(tmpdir(), 'countersign-bench-service-'));
const service = await openEmbeddedService({
  dataDir,
  logger: pino({ level: 'silent' }),
  daemonSigner: true,
});
try {
  const signer = service.daemonSigner;
  if (signer === undefined) throw new Error('the daemon signer was not created');
  const signWith = service.credentials.accounts.find(
    (a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM',
  )?.address;
  if (signWith === undefined) throw new Error('the default wallet has no Ethereum account');
  const stamper = new ApiKeyStamper(signer);
  // The client only builds bodies here; requests go to the service's handler directly.
  const client = new PublicApiClient({
    organizationId: signer.organizationId,
    stamper,
    transport: {
      send: () => Promise.reject(new Error('not used')),
      close: async () => {},
    },
  });

  let nonce = 0;
  const request = (): TransportRequest => {
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: 31337,
      nonce: nonce++,
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      value: 10n ** 15n,
      gas: 21_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    }).slice(2);
    const body = client.buildActivityBody({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      parameters: { signWith, unsignedTransaction: unsigned, type: 'TRANSACTION_TYPE_ETHEREUM' },
    });
    return {
      path: '/public/v1/submit/sign_transaction',
      // As the daemon asks (src/client/client.ts `summaries`): the activity's summary.
      headers: {
        'content-type': 'application/json',
        'x-stamp': stamper.stamp(body),
        [ANSWER_HEADER]: 'summary',
      },
      body,
    };
  };

  const run = async (calls: number) => {
    const requests = Array.from({ length: calls }, request);
    const before = process.cpuUsage();
    const mainBefore = mainThreadCpuUs();
    const startedMs = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < requests.length) {
          const res = await service.handler(requests[next++] as TransportRequest);
          const answer = Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength);
          if (res.status !== 200 || !answer.includes(SIGNED)) {
            throw new Error(`not signed: HTTP ${res.status}: ${answer.toString('utf8')}`);
          }
        }
      }),
    );
    const used = process.cpuUsage(before);
    return {
      processUs: (used.user + used.system) / calls,
      mainUs: (mainThreadCpuUs() - mainBefore) / calls,
      rate: (calls * 1000) / (performance.now() - startedMs),
    };
  };

  await run(Number(process.env.BENCH_WARMUP_CALLS ?? 3_000)); // warm-up: JIT, the page cache
  statementTimes.clear();
  for (let r = 0; r < ROUNDS; r++) {
    const x = await run(CALLS);
    console.log(
      `service work: ${x.processUs.toFixed(1)} µs CPU per call (process), ` +
        `${x.mainUs.toFixed(0)} µs (service thread), ${x.rate.toFixed(0)}/s (${CALLS} calls, ${IN_FLIGHT} in flight)`,
    );
  }
  if (STATEMENTS) {
    const calls = CALLS * ROUNDS;
    console.log('\n| µs per call | executions per call | µs each | statement |\n|---:|---:|---:|---|');
    const costliest = [...statementTimes].sort((a, b) => b[1][1] - a[1][1]).slice(0, 15);
    for (const [sql, [n, ns]] of costliest) {
      const text = sql.replace(/\s+/g, ' ').slice(0, 100);
      console.log(
        `| ${(ns / calls / 1000).toFixed(1)} | ${(n / calls).toFixed(2)} | ${(ns / n / 1000).toFixed(1)} | ${text} |`,
      );
    }
  }
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
