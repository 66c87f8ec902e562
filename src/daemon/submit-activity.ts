/**
 * Submits one signing activity, honouring `idempotency_key`: the body is built, recorded under
 * the key (or the earlier body is taken back), and only then sent.
 */
import { createHash } from 'node:crypto';
import type { Activity } from '../client/client.js';
import { bytesToHex } from '../shared/encoding.js';
import { invalid } from '../shared/errors.js';
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
    const claimed = ctx.idempotency.claim({
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
  const bodyDigest = bytesToHex(createHash('sha256').update(toSend).digest());
  call.log.debug({ activityName: name, bodySha256: bodyDigest, replayed }, 'submitting activity');
  const activity = await ctx.client.submit(name, toSend);
  call.log.debug({ activityId: activity.id, status: activity.status }, 'activity answered');
  return activity;
}
