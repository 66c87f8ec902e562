/**
 * `Signer.WatchActivity`: polls `query/get_activity` and sends the activity (as GetActivity
 * answers it, results verified) each time its state changes, the first time at once. It returns
 * after a terminal state; it stops without sending more when `signal` aborts (the client
 * cancelled, the deadline passed, or the daemon is closing; the caller decides what status ends
 * the stream).
 */
import type { DaemonContext } from './context.js';
import { activityTarget, readActivity, TERMINAL_STATES } from './get-activity.js';
import { pollChanges, pollInterval, type WatchCallContext } from './polling.js';
import type { GetActivityResponse, WatchActivityRequest } from './proto.js';

/** Streams state changes through `send` until a terminal state or until `signal` aborts. */
export async function watchActivity(
  ctx: DaemonContext,
  call: WatchCallContext,
  req: WatchActivityRequest,
  send: (message: GetActivityResponse) => void,
): Promise<void> {
  const target = activityTarget(ctx, req);
  await pollChanges<GetActivityResponse>(call.signal, {
    intervalMs: pollInterval(req.pollIntervalMs),
    read: (log) => readActivity(ctx, { log }, target),
    same: (a, b) => a.state === b.state,
    terminal: (m) => TERMINAL_STATES.has(m.state),
    summary: (m) => m.state,
    send,
    log: call.log.child({ activityId: target.activityId }),
  });
}
