/**
 * The polling loop behind the daemon's watch streams (WatchActivity, WatchSendTransaction): read,
 * send what changed (the first answer at once), stop after a terminal answer, sleep, repeat. The
 * stream's signal (client cancel, deadline, daemon shutdown) stops it between and during reads.
 */
import type { Logger } from 'pino';
import type { CallContext } from './context.js';

export const DEFAULT_POLL_INTERVAL_MS = 250;
/** Below this a watcher would turn into a load test of the public API. */
export const MIN_POLL_INTERVAL_MS = 50;
export const MAX_POLL_INTERVAL_MS = 60_000;

/** A streaming call's context: the logger, and the signal that ends the stream early. */
export interface WatchCallContext extends CallContext {
  readonly signal: AbortSignal;
}

/** The requested interval (0 = default) clamped to the floor and ceiling. */
export function pollInterval(requested: number): number {
  if (requested === 0) return DEFAULT_POLL_INTERVAL_MS;
  return Math.min(MAX_POLL_INTERVAL_MS, Math.max(MIN_POLL_INTERVAL_MS, requested));
}

export interface PollChangesOptions<T> {
  readonly intervalMs: number;
  /** One read of the current state; a rejection ends the watch with that error. */
  readonly read: (log: Logger) => Promise<T>;
  /** Whether two answers say the same to the caller (only changes are sent). */
  readonly same: (a: T, b: T) => boolean;
  /** An answer after which nothing changes any more. */
  readonly terminal: (m: T) => boolean;
  /** What to log of an answer (a state, never a payload). */
  readonly summary: (m: T) => string;
  readonly send: (m: T) => void;
  /** The call's logger, with the watched id bound. */
  readonly log: Logger;
}

/** Sends each change through `send` until a terminal answer, or until `signal` aborts. */
export async function pollChanges<T>(signal: AbortSignal, o: PollChangesOptions<T>): Promise<void> {
  const log = o.log.child({ intervalMs: o.intervalMs });
  let last: T | undefined;
  let polls = 0;
  while (!signal.aborted) {
    const current = await untilAborted(o.read(log), signal);
    polls++;
    if (current === undefined) break;
    if (last === undefined || !o.same(last, current)) {
      log.debug({ state: o.summary(current), polls }, 'state changed');
      o.send(current);
      last = current;
    }
    if (o.terminal(current)) {
      log.info({ state: o.summary(current), polls }, 'watch ended on a terminal state');
      return;
    }
    await sleep(o.intervalMs, signal);
  }
  log.info({ polls, reason: String(signal.reason) }, 'watch stopped early');
}

/** The promise's value, or undefined as soon as `signal` aborts (the query itself runs on). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
