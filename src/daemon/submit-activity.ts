/**
 * Submits one signing activity, honouring `idempotency_key`: the body is built, recorded under
 * the key (or the earlier body is taken back), and only then sent.
 */
import { createHash } from 'node:crypto';
import type { Activity } from '../client/client.js';
import { bytesToHex } from '../shared/encoding.js';
import { invalid, isCountersignError } from '../shared/errors.js';
import type { CallContext, DaemonContext } from './context.js';

const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

export interface SubmitActivityOptions {
  readonly method: string;
  readonly organizationId: string;
  /** '' when the caller did not ask for idempotency. */
  readonly idempotencyKey: string;
  /** The validated request, in a form that is equal for equal requests (see requestHash). */
  readonly request: Readonly<Record<string, unknown>>;
  readonly activityName: string;
  readonly activityType: string;
  readonly parameters: Record<string, unknown>;
}

/** Rejects an over-long key up front, before anything is built. */
export function checkIdempotencyKey(key: string): void {
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalid('idempotency_key', `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
}

/** SHA-256 over the method and the validated request (keys in insertion order, bytes as hex). */
export function requestHash(method: string, request: Readonly<Record<string, unknown>>): Uint8Array {
  return createHash('sha256')
    .update(JSON.stringify([method, request]))
    .digest();
}

/** Builds, records (when keyed) and submits the activity. */
export async function submitActivity(
  ctx: DaemonContext,
  call: CallContext,
  o: SubmitActivityOptions,
): Promise<Activity> {
  checkIdempotencyKey(o.idempotencyKey);
  const body = ctx.client.buildActivityBody({
    type: o.activityType,
    organizationId: o.organizationId,
    parameters: o.parameters,
  });
  let name = o.activityName;
  let toSend = body;
  let replayed = false;
  if (o.idempotencyKey !== '') {
    const claimed = await ctx.idempotency.claim({
      organizationId: o.organizationId,
      method: o.method,
      idempotencyKey: o.idempotencyKey,
      requestHash: requestHash(o.method, o.request),
      activityName: o.activityName,
      body,
    });
    name = claimed.activityName;
    toSend = claimed.body;
    replayed = claimed.replayed;
  }
  // The body's digest is for the debug line only: not computed unless that line is written.
  if (call.log.isLevelEnabled('debug')) {
    const bodySha256 = bytesToHex(createHash('sha256').update(toSend).digest());
    call.log.debug({ activityName: name, bodySha256, replayed }, 'submitting activity');
  }
  let activity: Activity;
  try {
    activity = await ctx.client.submit(name, toSend);
  } catch (e) {
    // A recorded body older than the service's window: the service answers an identical body with
    // its activity before it checks freshness, so TIMESTAMP_STALE means this body never ran and never
    // can. Record a freshly stamped one in its place and send that; exactly-once still holds.
    if (!(replayed && isCountersignError(e) && e.code === 'TIMESTAMP_STALE')) throw e;
    const key = { organizationId: o.organizationId, method: o.method, idempotencyKey: o.idempotencyKey };
    const fresh = await ctx.idempotency.refresh(key, toSend, body);
    call.log.info({ activityName: name }, 'recorded body was stale and never ran; submitting it afresh');
    activity = await ctx.client.submit(name, fresh);
  }
  call.log.debug({ activityId: activity.id, status: activity.status }, 'activity answered');
  return activity;
}
