/**
 * Prometheus families (prom-client), one registry per thread. `serve` runs the gRPC daemon on the
 * main thread and the service on a worker thread: each side registers only its own families
 * (`daemonMetrics()` / `serviceMetrics()`), the worker hands its registry over as JSON, and the
 * scrape aggregates both (prom-client's AggregatorRegistry, as for cluster workers), so no family
 * appears twice. Every label value comes from a closed set: RPC names, served routes, registered
 * activity types, countersign error codes, the chains below.
 */
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { isCountersignError, type ErrorCode } from '../shared/errors.js';

/** The registry of this thread. */
export const registry = new Registry();

/** A registry's families as plain data (what crosses postMessage and what is aggregated). */
export type MetricFamilies = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Latency buckets (seconds): sub-millisecond store commits up to multi-second remote signs. */
const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `--service-name`: a constant `service` label on every family of this thread. */
export function setServiceName(name: string): void {
  registry.setDefaultLabels({ service: name });
}

/** The countersign code of a failure, INTERNAL for anything else (closed set). */
export const errorCodeOf = (e: unknown): ErrorCode => (isCountersignError(e) ? e.code : 'INTERNAL');

/** The chains a signature is verified for (a closed set). */
export const VERIFIED_CHAINS = [
  'ethereum',
  'solana',
  'tron',
  'bitcoin',
  'tempo',
  'raw_payload',
  'message',
] as const;
export type VerifiedChain = (typeof VERIFIED_CHAINS)[number];

function daemonFamilies() {
  collectDefaultMetrics({ register: registry, prefix: 'countersign_' });
  const registers = [registry];
  return {
    grpcRequests: new Counter({
      name: 'countersign_grpc_requests_total',
      help: 'gRPC unary calls answered, by method and countersign code (OK on success).',
      labelNames: ['method', 'code'] as const,
      registers,
    }),
    grpcSeconds: new Histogram({
      name: 'countersign_grpc_request_duration_seconds',
      help: 'Time to answer a gRPC unary call, by method.',
      labelNames: ['method'] as const,
      buckets: SECONDS,
      registers,
    }),
    verifications: new Counter({
      name: 'countersign_signature_verifications_total',
      help: 'Signatures the daemon verified before returning them, by chain and result (ok, failed).',
      labelNames: ['chain', 'result'] as const,
      registers,
    }),
  };
}

function serviceFamilies() {
  const registers = [registry];
  return {
    apiSeconds: new Histogram({
      name: 'countersign_api_request_duration_seconds',
      help: 'Time to answer a public API request, by route.',
      labelNames: ['route'] as const,
      buckets: SECONDS,
      registers,
    }),
    apiErrors: new Counter({
      name: 'countersign_api_errors_total',
      help: 'Public API requests refused or failed, by countersign code.',
      labelNames: ['code'] as const,
      registers,
    }),
    policyDecisions: new Counter({
      name: 'countersign_policy_decisions_total',
      help: 'Policy decisions on activities, by outcome (allow, deny, consensus).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    storeSeconds: new Histogram({
      name: 'countersign_store_transaction_duration_seconds',
      help: 'Time of one store write transaction (a batch of writes), BEGIN to COMMIT.',
      buckets: SECONDS,
      registers,
    }),
    sendBacklog: new Gauge({
      name: 'countersign_send_backlog',
      help: 'Sent transactions the send tracker still follows (not yet included or failed), as of its last round.',
      registers,
    }),
    sendOldestSeconds: new Gauge({
      name: 'countersign_send_oldest_pending_seconds',
      help: 'Age of the oldest transaction the send tracker still follows (0 when none), as of its last round.',
      registers,
    }),
    commitSeconds: new Histogram({
      name: 'countersign_store_commit_duration_seconds',
      help: 'Time of the COMMIT alone (SQLite: writing the WAL; PostgreSQL: the durable commit).',
      buckets: SECONDS,
      registers,
    }),
    fsyncSeconds: new Histogram({
      name: 'countersign_store_fsync_duration_seconds',
      help: "SQLite: one fdatasync of the WAL, run off the service's thread; it covers every commit made before it began.",
      buckets: SECONDS,
      registers,
    }),
  };
}

let daemon: ReturnType<typeof daemonFamilies> | undefined;
let service: ReturnType<typeof serviceFamilies> | undefined;

/** The gRPC daemon's families (and Node's process metrics), registered on first use. */
export const daemonMetrics = () => (daemon ??= daemonFamilies());
/** The service's families, registered on first use. */
export const serviceMetrics = () => (service ??= serviceFamilies());

/** Seconds since a `process.hrtime.bigint()` reading. */
export const secondsSince = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e9;

/** This thread's families as plain data (crosses postMessage). */
export const metricsJson = (): Promise<MetricFamilies> => registry.getMetricsAsJSON();

/** Prometheus text of this thread's families plus another thread's (sums shared series). */
export async function aggregateText(others: readonly MetricFamilies[]): Promise<string> {
  if (others.length === 0) return registry.metrics();
  return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others]).metrics();
}

/** Policy outcome label of a decision's outcome. */
export function policyOutcomeLabel(outcome: string): 'allow' | 'deny' | 'consensus' {
  if (outcome === 'OUTCOME_ALLOW') return 'allow';
  if (outcome === 'OUTCOME_REQUIRES_CONSENSUS') return 'consensus';
  return 'deny';
}

/** The chain a gRPC signing call verifies a signature for, or undefined for a call that signs nothing. */
export function verifiedChainOf(method: string, request: unknown): VerifiedChain | undefined {
  if (method === 'SignRawPayloads') return 'raw_payload';
  if (method === 'SignMessage') return 'message';
  if (method !== 'SignTransaction') return undefined;
  const tx = (request as { transaction?: unknown } | null)?.transaction;
  return VERIFIED_CHAINS.find((c) => c === tx);
}

/** Counts one answered gRPC unary call: by method and code, its latency, the signature it verified. */
export function observeGrpcCall(method: string, request: unknown, started: bigint, error?: unknown): void {
  const m = daemonMetrics();
  const code = error === undefined ? 'OK' : errorCodeOf(error);
  m.grpcRequests.inc({ method, code });
  m.grpcSeconds.observe({ method }, secondsSince(started));
  const chain = verifiedChainOf(method, request);
  // A signing call that succeeded returned a signature it had verified; one that failed on
  // verification did not. Other failures (denied, invalid) verified nothing.
  if (chain === undefined) return;
  if (code === 'OK') m.verifications.inc({ chain, result: 'ok' });
  else if (code === 'SIGNATURE_VERIFICATION_FAILED') m.verifications.inc({ chain, result: 'failed' });
}

/** One committed store transaction: BEGIN to COMMIT, and the COMMIT alone. */
export function observeStoreWrite(began: bigint, committing: bigint): void {
  const m = serviceMetrics();
  m.storeSeconds.observe(secondsSince(began));
  m.commitSeconds.observe(secondsSince(committing));
}

/** One fdatasync of SQLite's WAL (every commit before it began is durable when it returns). */
export function observeStoreSync(began: bigint): void {
  serviceMetrics().fsyncSeconds.observe(secondsSince(began));
}

/** The send tracker's backlog as one round saw it. */
export function observeSendBacklog(
  pending: readonly { readonly createdAtMs: number }[],
  nowMs: number,
): void {
  const m = serviceMetrics();
  m.sendBacklog.set(pending.length);
  const oldest = pending.reduce((o, r) => Math.min(o, r.createdAtMs), nowMs);
  m.sendOldestSeconds.set((nowMs - oldest) / 1000);
}
