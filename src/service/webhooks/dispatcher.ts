/**
 * Delivers the webhook outbox. Each lane (one receiver) has at most one delivery in flight and takes
 * them in outbox order; lanes run side by side (up to `concurrency`), so a slow or failing receiver
 * only holds up its own lane. A delivery is leased in the store before it is sent and every attempt
 * is recorded with its status, latency and error; 2xx delivers, network errors, timeouts and 5xx
 * retry with exponential backoff and jitter until the retry window ends (429 waits for Retry-After),
 * 3xx and other 4xx end it. Every attempt is signed afresh (new timestamp, same event id).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isCountersignError } from '../../shared/errors.js';
import { utf8 } from '../../shared/encoding.js';
import {
  outboundRequest,
  type OutboundResponse,
  type ResolveHost,
} from '../../shared/outbound/outboundRequest.js';
import type { OutboundPolicy } from '../../shared/outbound/guard.js';
import type { Socket } from 'node:net';
import type { KeyVault } from '../keys/index.js';
import type {
  ActivityRecord,
  Store,
  WebhookAttemptOutcome,
  WebhookAttemptResult,
  WebhookDeliveryRecord,
  WebhookEventRecord,
  WebhookSigningKeyRecord,
} from '../store/types.js';
import { activityResponse } from '../api/envelope.js';
import { votesWithUsers } from '../api/queries.js';
import { activeWebhookKey, signWebhook, verifyWebhookSigningKey } from './signingKeys.js';
import type { WebhookMetrics } from './metrics.js';

export interface WebhookDispatcherOptions {
  /** The name recorded on the deliveries this dispatcher leases (default: a fresh UUID). */
  readonly replicaId?: string;
  readonly store: Store;
  readonly vault: KeyVault;
  readonly logger: Logger;
  readonly metrics: WebhookMetrics;
  readonly policy: OutboundPolicy;
  /** How long a delivery is retried, from its event (or its re-delivery); default 24 h. */
  readonly maxAgeMs?: number;
  /** The first retry's delay before jitter; it doubles per attempt (default 1 s). */
  readonly baseDelayMs?: number;
  /** No retry waits longer than this (default 1 h). */
  readonly maxDelayMs?: number;
  /** Deadline of one attempt, connect to last byte (default 10 s). */
  readonly attemptTimeoutMs?: number;
  /** Lanes with an attempt in flight at once (default 32). */
  readonly concurrency?: number;
  /** Longest sleep between looks at the outbox when nothing wakes the dispatcher (default 1 s). */
  readonly pollMs?: number;
  /** Bytes of a receiver's answer read (default 4 KiB; the rest is discarded). */
  readonly maxResponseBytes?: number;
  readonly now?: () => number;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
  /** Test seams passed to the outbound guard. */
  readonly resolve?: ResolveHost;
  readonly createConnection?: () => Socket;
}

export interface WebhookDispatcher {
  /** Look at the outbox now (after a commit that queued deliveries). */
  wake(): void;
  /** Stops taking work and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Deliveries of one lane leased at once. */
const LANE_BATCH = 16;

/** Retry-After as seconds or an HTTP date (RFC 9110 10.2.3), in ms from now; undefined if absent or bad. */
export function retryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  if (/^[0-9]+$/.test(v.trim())) return Number(v.trim()) * 1000;
  // An HTTP date names its day and month; Date.parse alone would take '-5' as a year.
  if (!/^[A-Za-z]{3}, /.test(v.trim())) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Full-range exponential backoff with jitter: between half and all of base·2^(attempt-1), capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(full / 2 + (random() * full) / 2);
}

/** What a receiver's answer means for the delivery. */
export function classifyAnswer(status: number): WebhookAttemptOutcome {
  if (status >= 200 && status < 300) return 'DELIVERED';
  if (status === 429 || status >= 500) return 'RETRY';
  return 'FAILED'; // 1xx (never final), 3xx (redirects are not followed) and other 4xx
}

export function startWebhookDispatcher(opts: WebhookDispatcherOptions): WebhookDispatcher {
  const { store, vault, logger, metrics } = opts;
  const clock = opts.now ?? Date.now;
  const random = opts.random ?? Math.random;
  const maxAgeMs = opts.maxAgeMs ?? DAY_MS;
  const baseDelayMs = opts.baseDelayMs ?? 1_000;
  const maxDelayMs = opts.maxDelayMs ?? 60 * 60 * 1000;
  const attemptTimeoutMs = opts.attemptTimeoutMs ?? 10_000;
  const concurrency = opts.concurrency ?? 32;
  const pollMs = opts.pollMs ?? 1_000;
  const maxResponseBytes = opts.maxResponseBytes ?? 4096;
  // Long enough that an attempt and its record always finish inside it.
  const leaseMs = attemptTimeoutMs + 30_000;
  // A lane's claimed run is sent one after another, so its lease covers every attempt of the run.
  const batchLeaseMs = leaseMs * LANE_BATCH;
  // --- replicas --- recorded on the rows this dispatcher leases (claimed_by), for operators.
  const claimedBy = opts.replicaId ?? randomUUID();

  const active = new Map<string, Promise<void>>();
  let stopped = false;
  let running = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let signingKey: { key: WebhookSigningKeyRecord; readAtMs: number } | undefined;

  /** The signing key, re-read every few seconds so a rotation takes effect without a restart. */
  async function currentKey(): Promise<WebhookSigningKeyRecord> {
    const now = clock();
    if (signingKey !== undefined && now - signingKey.readAtMs < 5_000) return signingKey.key;
    const key = activeWebhookKey(await store.listWebhookSigningKeys());
    if (key === undefined) throw new Error('there is no webhook signing key');
    if (signingKey?.key.id !== key.id) verifyWebhookSigningKey(vault, key);
    signingKey = { key, readAtMs: now };
    return key;
  }

  /** The body as first rendered: an activity event is the activity in the API's own encoding. */
  async function bodyOf(event: WebhookEventRecord): Promise<string> {
    if (event.bodyJson !== null) return event.bodyJson;
    switch (event.eventType) {
      case 'ACTIVITY_UPDATES': {
        const a = JSON.parse(event.snapshotJson) as ActivityRecord;
        // Votes are only ever added: the ones cast up to the change are those the change saw.
        const votes = (await votesWithUsers(store, a.id)).filter((v) => v.vote.createdAtMs <= a.updatedAtMs);
        return JSON.stringify(activityResponse(a, votes).activity);
      }
      case 'SEND_TRANSACTION_STATUS_UPDATES':
        return event.snapshotJson;
      default: {
        const never: never = event.eventType;
        throw new Error(`unknown event type ${String(never)}`);
      }
    }
  }

  async function attempt(d: WebhookDeliveryRecord): Promise<WebhookAttemptResult> {
    const number = d.attempts + 1;
    const startedAtMs = clock();
    const log = logger.child({ eventId: d.eventId, deliveryId: d.id, lane: d.lane, attempt: number });
    const event = await store.getWebhookEvent(d.eventId);
    if (event === undefined) throw new Error(`event ${d.eventId} of delivery ${d.id} is missing`);
    const bodyJson = await bodyOf(event);
    const body = utf8(bodyJson);
    const key = await currentKey();
    const timestampMs = String(clock());
    const signature = signWebhook({ vault, key, timestampMs, eventId: d.eventId, body });
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'countersign-webhooks/1',
      'x-turnkey-organization-id': d.ownerOrganizationId,
      'x-turnkey-event-type': d.eventType,
      'x-turnkey-timestamp': timestampMs,
      'x-turnkey-webhook-version': '1',
      'x-turnkey-event-id': d.eventId,
      'x-turnkey-signature-key-id': key.id,
      'x-turnkey-signature-algorithm': 'ed25519',
      'x-turnkey-signature-version': 'v1',
      'x-turnkey-signature': signature,
    };
    const t0 = process.hrtime.bigint();
    let res: OutboundResponse | undefined;
    let error: string | null = null;
    let refused = false;
    try {
      res = await outboundRequest({
        url: d.url,
        method: 'POST',
        headers,
        body,
        timeoutMs: attemptTimeoutMs,
        maxResponseBytes,
        policy: opts.policy,
        field: 'url',
        ...(opts.resolve === undefined ? {} : { resolve: opts.resolve }),
        ...(opts.createConnection === undefined ? {} : { createConnection: opts.createConnection }),
      });
    } catch (e) {
      if (!isCountersignError(e)) throw e;
      // A refusal by the guard (an address it may not dial, found at dial time) is final.
      refused = e.code === 'OUTBOUND_URL_REFUSED';
      error = e.message;
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const now = clock();
    let outcome: WebhookAttemptOutcome;
    let nextAttemptAtMs = now;
    if (res === undefined) outcome = refused ? 'FAILED' : 'RETRY';
    else {
      outcome = classifyAnswer(res.status);
      if (outcome !== 'DELIVERED') error = `the receiver answered HTTP ${res.status}`;
    }
    if (outcome === 'RETRY') {
      const after = res?.status === 429 ? retryAfterMs(res.headers['retry-after'], now) : undefined;
      nextAttemptAtMs = now + (after ?? backoffMs(number, baseDelayMs, maxDelayMs, random));
      if (nextAttemptAtMs - d.windowStartMs > maxAgeMs) {
        outcome = 'FAILED';
        error = `${error ?? 'no answer'}; retries stopped after ${number} attempts (the retry window is ${maxAgeMs} ms)`;
      }
    }
    metrics.attempt(d.source, outcome, seconds);
    const fields = { status: res?.status, latencyMs: Math.round(seconds * 1000) };
    if (outcome === 'DELIVERED') log.debug(fields, 'webhook delivered');
    else if (outcome === 'RETRY')
      log.info({ ...fields, error, nextAttemptAtMs }, 'webhook attempt failed; will retry');
    else log.warn({ ...fields, error }, 'webhook delivery failed for good');
    return {
      attempt: {
        deliveryId: d.id,
        attempt: number,
        startedAtMs,
        latencyMs: Math.round(seconds * 1000),
        statusCode: res?.status ?? null,
        outcome,
        error,
        signingKeyId: key.id,
      },
      state: outcome === 'RETRY' ? 'PENDING' : outcome,
      nextAttemptAtMs,
      bodyJson,
    };
  }

  /**
   * Sends a lane's deliveries one after another. Deliveries are claimed a few at a time and each
   * attempt's record is queued without waiting for its commit, so one fsync covers several
   * deliveries; a crash before that commit only means those are sent again (same event id). A
   * delivery to be retried ends the run of claimed ones (the rest are released: order is kept).
   */
  function runLane(first: WebhookDeliveryRecord): void {
    const lane = first.lane;
    const run = (async () => {
      let queue: WebhookDeliveryRecord[] = [first];
      const records: Promise<unknown>[] = [];
      // Observed at once, so a failed record write is logged even if the lane stops before awaiting it.
      const track = (p: Promise<unknown>) =>
        records.push(
          p.catch((e: unknown) => logger.error({ err: e, lane }, 'a webhook attempt could not be recorded')),
        );
      for (;;) {
        if (stopped && queue.length > 0) {
          const rest = queue.map((x) => x.id);
          queue = [];
          track(store.write(async (tx) => await tx.releaseWebhookDeliveries(rest)));
        }
        const d = queue.shift();
        if (d === undefined) {
          if (stopped) break;
          const at = clock();
          queue = await store.write(
            async (tx) => await tx.claimWebhookLane(lane, at, at + batchLeaseMs, LANE_BATCH, claimedBy),
          );
          if (queue.length === 0) break;
          continue;
        }
        const result = await attempt(d);
        if (result.state !== 'PENDING' && queue.length === 0 && !stopped) {
          // The lane's claimed run is done: record the last attempt and claim the next run in one write.
          const at = clock();
          queue = await store.write(async (tx) => {
            await tx.recordWebhookAttempt(result);
            return await tx.claimWebhookLane(lane, at, at + batchLeaseMs, LANE_BATCH, claimedBy);
          });
          if (queue.length === 0) break;
          continue;
        }
        track(store.write(async (tx) => await tx.recordWebhookAttempt(result)));
        if (result.state !== 'PENDING') continue;
        // A retry: what was claimed after it waits behind it.
        const rest = queue.map((x) => x.id);
        queue = [];
        if (rest.length > 0) track(store.write(async (tx) => await tx.releaseWebhookDeliveries(rest)));
        // A retry due before the next look at the outbox is waited out here, keeping the lane.
        const wait = result.nextAttemptAtMs - clock();
        if (wait >= pollMs || stopped) break;
        await Promise.all(records.splice(0));
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      await Promise.all(records);
    })();
    active.set(
      lane,
      run
        .catch((e: unknown) => {
          // The lease runs out and the delivery is taken again; nothing is lost.
          logger.error({ err: e, lane, deliveryId: first.id }, 'webhook lane stopped on an internal error');
        })
        .finally(() => {
          active.delete(lane);
          wake();
        }),
    );
  }

  async function pass(): Promise<void> {
    timer = undefined;
    if (stopped) return;
    running = true;
    lastPassAtMs = clock();
    again = false;
    let claimed = 0;
    let nextDueAtMs: number | null = null;
    try {
      const slots = concurrency - active.size;
      if (slots > 0) {
        const now = clock();
        const busy = [...active.keys()];
        const heads = await store.write(
          async (tx) => await tx.claimWebhookDeliveries(now, now + leaseMs, slots, busy, claimedBy),
        );
        claimed = heads.length;
        if (!stopped) for (const d of heads) runLane(d);
      }
      const backlog = await store.webhookBacklog(clock());
      metrics.setBacklog(backlog);
      nextDueAtMs = backlog.nextDueAtMs;
    } catch (e) {
      if (!stopped) logger.error({ err: e }, 'webhook dispatcher pass failed');
    } finally {
      running = false;
    }
    if (stopped) return;
    const now = clock();
    // Due but busy (or leased elsewhere) heads are picked up when their lane finishes or at the poll.
    const wait =
      again || claimed > 0
        ? 0
        : nextDueAtMs === null || nextDueAtMs <= now
          ? pollMs
          : Math.min(pollMs, nextDueAtMs - now);
    schedule(wait);
  }

  function schedule(ms: number): void {
    if (stopped) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => void pass(), ms);
    timer.unref();
  }

  let lastPassAtMs = 0;
  /** Passes are at least this far apart: a burst of commits wakes the dispatcher once, not per commit. */
  const MIN_PASS_GAP_MS = 10;

  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    schedule(Math.max(0, lastPassAtMs + MIN_PASS_GAP_MS - clock()));
  }

  schedule(0);
  return {
    wake,
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      while (running) await new Promise((r) => setTimeout(r, 5));
      await Promise.allSettled([...active.values()]);
    },
  };
}
