/**
 * Failpoints for the crash and readiness tests: compiled in, inert unless the environment variable
 * COUNTERSIGN_FAILPOINT names one. A crash point kills the whole process with SIGKILL (from any
 * thread: the signal goes to the process), exactly where a power cut or an OOM kill could land.
 * The stall point blocks the calling thread (the service thread, so its store cannot answer) for
 * COUNTERSIGN_FAILPOINT_MS (default 5000) the first time it is reached, then never again. The
 * linger point keeps the service thread alive for a minute after its service has closed.
 */
export const FAILPOINTS = [
  'after-policy-decision',
  'after-sign-before-commit',
  'after-commit-before-answer',
  'after-broadcast-before-record',
  'in-tracker-round',
  'stall-store',
  'linger-after-close',
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

const active = process.env.COUNTERSIGN_FAILPOINT;
let stalled = false;

/** Kills the process here when `name` is the enabled failpoint. */
export function crashPoint(name: Exclude<Failpoint, 'stall-store' | 'linger-after-close'>): void {
  if (active === name) process.kill(process.pid, 'SIGKILL');
}

/** Blocks this thread once, here, when `stall-store` is the enabled failpoint. */
export function stallPoint(name: 'stall-store'): void {
  if (active !== name || stalled) return;
  stalled = true;
  const ms = Number(process.env.COUNTERSIGN_FAILPOINT_MS ?? '5000');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number.isFinite(ms) ? ms : 5000);
}

/** Keeps this thread's event loop busy for a minute when `linger-after-close` is the enabled failpoint. */
export function lingerPoint(name: 'linger-after-close'): void {
  if (active === name) setTimeout(() => undefined, 60_000);
}
