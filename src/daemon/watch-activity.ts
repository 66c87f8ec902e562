/**
 * `Signer.WatchActivity`: polls `query/get_activity` and sends the activity (as GetActivity
 * answers it, results verified) each time its state changes, the first time at once. It returns
 * after a terminal state; it stops without sending more when `signal` aborts (the client
 * cancelled, the deadline passed, or the daemon is closing; the caller decides what status ends
 * the stream).
 */
import type { CallContext, DaemonContext } from './context.js';
import { activityTarget, readActivity, TERMINAL_STATES } from './get-activity.js';
import type { GetActivityResponse, WatchActivityRequest } from './proto.js';

export const DEFAULT_POLL_INTERVAL_MS = 250;
/** Below this a watcher would turn into a load test of the public API. */
export const MIN_POLL_INTERVAL_MS = 50;
export const MAX_POLL_INTERVAL_MS = 60_000;

/** A streaming call's context: the logger, and the signal that ends the stream early. */
export interface WatchCallContext extends CallContext {
  readonly signal: AbortSignal;
}

/** Streams state changes through `send` until a terminal state or until `signal` aborts. */
export async function watchActivity(
  ctx: DaemonContext,
  call: WatchCallContext,
  req: WatchActivityRequest,
  send: (message: GetActivityResponse) => void,
): Promise<void> {
  const target = activityTarget(ctx, req);
  const intervalMs = pollInterval(req.pollIntervalMs);
  const log = call.log.child({ activityId: target.activityId, intervalMs });
  let last: GetActivityResponse['state'] | undefined;
  let polls = 0;
  while (!call.signal.aborted) {
    const current = await untilAborted(readActivity(ctx, { log }, target), call.signal);
    polls++;
    if (current === undefined) break;
    if (current.state !== last) {
      log.debug({ state: current.state, polls }, 'activity state changed');
      send(current);
      last = current.state;
    }
    if (TERMINAL_STATES.has(current.state)) {
      log.info({ state: current.state, polls }, 'watch ended on a terminal state');
      return;
    }
    await sleep(intervalMs, call.signal);
  }
  log.info({ polls, reason: String(call.signal.reason) }, 'watch stopped early');
}

function pollInterval(requested: number): number {
  if (requested === 0) return DEFAULT_POLL_INTERVAL_MS;
  return Math.min(MAX_POLL_INTERVAL_MS, Math.max(MIN_POLL_INTERVAL_MS, requested));
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
