import { uuidv7 } from '../../ids.js';
import { inJsonList, str, num, bytes, nstr, type Conn, type Stmt, type Row } from '../conn.js';
import { toActivity, toSend, toWebhookDelivery, DELIVERY_COLUMNS } from './records.js';
import {
  type Store,
  type StoreTx,
  type WebhookAttemptOutcome,
  type WebhookDeliveryRecord,
  type WebhookDeliverySource,
  type WebhookEndpointRecord,
  type WebhookEventType,
} from '../types.js';

// --- webhooks ---
// Webhook endpoints, the delivery outbox with its attempts, and the webhook signing keys (issue 14);
// spread into the transaction and read objects of parts.ts.
type WebhooksTx = Pick<
  StoreTx,
  | 'insertWebhookEndpoint'
  | 'getWebhookEndpoint'
  | 'countWebhookEndpoints'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'enqueueActivityEvent'
  | 'enqueueSendStatusEvent'
  | 'claimWebhookDeliveries'
  | 'recordWebhookAttempt'
  | 'claimWebhookLane'
  | 'releaseWebhookDeliveries'
  | 'redeliverWebhook'
  | 'releaseWebhookLeases'
  | 'insertWebhookSigningKey'
  | 'retireWebhookSigningKeys'
>;
type WebhooksRead = Pick<
  Store,
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'getWebhookEvent'
  | 'getWebhookDelivery'
  | 'listWebhookDeliveries'
  | 'listWebhookAttempts'
  | 'listWebhookSigningKeys'
  | 'webhookBacklog'
>;

export function webhooksParts(db: Conn): { tx: WebhooksTx; read: WebhooksRead } {
  const p = (sql: string) => db.prepare(sql);
  // --- replicas --- On PostgreSQL, candidate rows another replica is claiming right now are skipped
  // rather than waited for; the lease update below still decides which claimant gets a row.
  const skipLocked = db.dialect === 'postgres' ? ' FOR UPDATE OF d SKIP LOCKED' : '';
  const s = {
    insEndpoint: p(
      'INSERT INTO webhook_endpoints (id, organization_id, url, name, is_active, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?,?,?)',
    ),
    updEndpoint: p(
      'UPDATE webhook_endpoints SET url = ?, name = ?, is_active = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    delEndpoint: p('DELETE FROM webhook_endpoints WHERE organization_id = ? AND id = ?'),
    endpoint: p('SELECT * FROM webhook_endpoints WHERE organization_id = ? AND id = ?'),
    endpoints: p('SELECT * FROM webhook_endpoints WHERE organization_id = ? ORDER BY created_at_ms, id'),
    countEndpoints: p('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE organization_id = ?'),
    insSub: p(
      'INSERT INTO webhook_subscriptions (endpoint_id, event_type, filters_json, is_active, position) VALUES (?,?,?,?,?)',
    ),
    delSubs: p('DELETE FROM webhook_subscriptions WHERE endpoint_id = ?'),
    subs: p('SELECT * FROM webhook_subscriptions WHERE endpoint_id = ? ORDER BY position'),
    // Receivers of an event: active endpoints of these organizations with an active subscription.
    subscribers: p(
      `SELECT e.id, e.organization_id, e.url FROM webhook_endpoints e
         JOIN webhook_subscriptions s ON s.endpoint_id = e.id
       WHERE ${inJsonList(db, 'e.organization_id')} AND e.is_active = 1
         AND s.event_type = ? AND s.is_active = 1
       ORDER BY e.created_at_ms, e.id`,
    ),
    feature: p(
      "SELECT value FROM organization_features WHERE organization_id = ? AND name = 'FEATURE_NAME_WEBHOOK'",
    ),
    // Whether any organization could receive an activity event at all: one probe on two indexes
    // (migration 14), so a deployment without webhooks pays one statement per activity, not four.
    anyActivityTarget: p(
      `SELECT 1 AS yes WHERE EXISTS (SELECT 1 FROM webhook_subscriptions
                                      WHERE event_type = 'ACTIVITY_UPDATES' AND is_active = 1)
                          OR EXISTS (SELECT 1 FROM organization_features WHERE name = 'FEATURE_NAME_WEBHOOK')`,
    ),
    org: p('SELECT parent_id FROM organizations WHERE id = ?'),
    activity: p('SELECT * FROM activities WHERE id = ?'),
    send: p('SELECT * FROM send_transactions WHERE id = ?'),
    insEvent: p(
      'INSERT INTO webhook_events (id, organization_id, event_type, subject_id, snapshot_json, body_json, created_at_ms) VALUES (?,?,?,?,?,?,?)',
    ),
    event: p('SELECT * FROM webhook_events WHERE id = ?'),
    setEventBody: p('UPDATE webhook_events SET body_json = ? WHERE id = ? AND body_json IS NULL'),
    insDelivery: p(
      `INSERT INTO webhook_deliveries (id, event_id, lane, source, endpoint_id, owner_organization_id, url, state,
         attempts, next_attempt_at_ms, lease_until_ms, window_start_ms, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,'PENDING',0,?,0,?,?,?)`,
    ),
    delivery: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.id = ?`,
    ),
    // Lane heads: the oldest pending delivery of each lane, when due and not leased.
    heads: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
         JOIN (SELECT lane, MIN(seq) AS seq FROM webhook_deliveries WHERE state = 'PENDING' GROUP BY lane) h
           ON h.seq = d.seq
         JOIN webhook_events e ON e.id = d.event_id
       WHERE d.next_attempt_at_ms <= ? AND d.lease_until_ms <= ?
         AND NOT ${inJsonList(db, 'd.lane')}
       ORDER BY d.next_attempt_at_ms, d.seq LIMIT ?${skipLocked}`,
    ),
    laneHeads: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.lane = ? AND d.state = 'PENDING' ORDER BY d.seq LIMIT ?`,
    ),
    release: p("UPDATE webhook_deliveries SET lease_until_ms = 0 WHERE id = ? AND state = 'PENDING'"),
    lease: p(
      "UPDATE webhook_deliveries SET lease_until_ms = ?, claimed_by = ? WHERE id = ? AND state = 'PENDING' AND lease_until_ms <= ?",
    ),
    finish: p(
      `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at_ms = ?, lease_until_ms = 0,
         last_error = ?, delivered_at_ms = COALESCE(?, delivered_at_ms), updated_at_ms = ?
       WHERE id = ? AND state = 'PENDING'`,
    ),
    insAttempt: p(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at_ms, latency_ms, status_code, outcome, error, signing_key_id)
       VALUES (?,?,?,?,?,?,?,?)`,
    ),
    attempts: p('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt'),
    // Only rows whose URL differs: in the usual case (the URL did not change) it touches, and locks,
    // nothing, so concurrent writers on one lane do not queue (or deadlock) on each other's rows.
    followUrl: p("UPDATE webhook_deliveries SET url = ? WHERE lane = ? AND state = 'PENDING' AND url <> ?"),
    orphan: p(
      `UPDATE webhook_deliveries SET state = 'FAILED', lease_until_ms = 0, last_error = 'the endpoint was deleted',
         updated_at_ms = ? WHERE lane = ? AND state = 'PENDING'`,
    ),
    redeliver: p(
      `UPDATE webhook_deliveries SET state = 'PENDING', next_attempt_at_ms = ?, lease_until_ms = 0, window_start_ms = ?,
         updated_at_ms = ? WHERE id = ? AND state <> 'PENDING'`,
    ),
    releaseLeases: p(
      "UPDATE webhook_deliveries SET lease_until_ms = 0 WHERE state = 'PENDING' AND lease_until_ms > 0",
    ),
    deliveries: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.owner_organization_id = ? AND d.seq < ?
         AND (CAST(? AS TEXT) IS NULL OR d.endpoint_id = ?) AND (CAST(? AS TEXT) IS NULL OR d.state = ?) AND (CAST(? AS TEXT) IS NULL OR d.event_id = ?)
       ORDER BY d.seq DESC LIMIT ?`,
    ),
    seqOf: p('SELECT seq FROM webhook_deliveries WHERE id = ?'),
    backlog: p(
      `SELECT COUNT(*) AS pending,
         MIN(CASE WHEN next_attempt_at_ms <= ? THEN next_attempt_at_ms END) AS oldest_due,
         MIN(next_attempt_at_ms) AS next_due
       FROM webhook_deliveries WHERE state = 'PENDING'`,
    ),
    insKey: p(
      'INSERT INTO webhook_signing_keys (id, public_key, sealed_key, created_at_ms, retired_at_ms) VALUES (?,?,?,?,?)',
    ),
    retireKeys: p(
      'UPDATE webhook_signing_keys SET retired_at_ms = ? WHERE id <> ? AND retired_at_ms IS NULL',
    ),
    keys: p('SELECT * FROM webhook_signing_keys ORDER BY created_at_ms, id'),
  };
  const get = async (st: Stmt, ...a: unknown[]) => await st.get(...a);
  const all = async (st: Stmt, ...a: unknown[]) => await st.all(...a);

  const toEndpoint = async (r: Row): Promise<WebhookEndpointRecord> => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    url: str(r.url),
    name: str(r.name),
    isActive: num(r.is_active) === 1,
    subscriptions: (await all(s.subs, r.id)).map((x) => ({
      eventType: str(x.event_type) as WebhookEventType,
      filtersJson: nstr(x.filters_json),
      isActive: num(x.is_active) === 1,
    })),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const getEndpoint = async (org: string, id: string) => {
    const r = await get(s.endpoint, org, id);
    return r && toEndpoint(r);
  };
  const insertSubs = async (r: WebhookEndpointRecord): Promise<void> => {
    for (const [i, x] of r.subscriptions.entries())
      await s.insSub.run(r.id, x.eventType, x.filtersJson, x.isActive ? 1 : 0, i);
  };
  const endpointLane = (id: string) => `endpoint:${id}`;

  /** The organization and its parent (a parent's receivers get its sub-organizations' events). */
  const scopeOf = async (org: string): Promise<string[]> => {
    const parent = nstr((await get(s.org, org))?.parent_id);
    return parent === null ? [org] : [org, parent];
  };

  const insertEvent = async (
    org: string,
    type: WebhookEventType,
    subjectId: string,
    snapshot: string,
    body: string | null,
    nowMs: number,
  ): Promise<string> => {
    // Time-ordered ids (events and deliveries): their unique indexes grow at their end.
    const id = uuidv7(nowMs);
    await s.insEvent.run(id, org, type, subjectId, snapshot, body, nowMs);
    return id;
  };
  const insertDelivery = async (
    eventId: string,
    lane: string,
    source: WebhookDeliverySource,
    endpointId: string | null,
    owner: string,
    url: string,
    nowMs: number,
  ) =>
    await s.insDelivery.run(
      uuidv7(nowMs),
      eventId,
      lane,
      source,
      endpointId,
      owner,
      url,
      nowMs,
      nowMs,
      nowMs,
      nowMs,
    );

  /** The rows this transaction could lease (a row another claimant leased first is left out). */
  const lease = async (
    rows: Row[],
    nowMs: number,
    leaseUntilMs: number,
    claimedBy: string | undefined,
  ): Promise<WebhookDeliveryRecord[]> => {
    const out: WebhookDeliveryRecord[] = [];
    for (const r of rows)
      if ((await s.lease.run(leaseUntilMs, claimedBy ?? null, r.id, nowMs)).changes === 1)
        out.push({ ...toWebhookDelivery(r), leaseUntilMs });
    return out;
  };

  const claimLane = async (
    lane: string,
    nowMs: number,
    leaseUntilMs: number,
    limit: number,
    claimedBy?: string,
  ) => {
    const out: WebhookDeliveryRecord[] = [];
    for (const r of await all(s.laneHeads, lane, limit)) {
      if (num(r.next_attempt_at_ms) > nowMs) break;
      const [leased] = await lease([r], nowMs, leaseUntilMs, claimedBy);
      if (leased === undefined) break;
      out.push(leased);
    }
    return out;
  };

  return {
    tx: {
      insertWebhookEndpoint: async (r) => {
        await s.insEndpoint.run(
          r.id,
          r.organizationId,
          r.url,
          r.name,
          r.isActive ? 1 : 0,
          r.createdAtMs,
          r.updatedAtMs,
        );
        await insertSubs(r);
      },
      getWebhookEndpoint: getEndpoint,
      countWebhookEndpoints: async (org) => num((await get(s.countEndpoints, org))?.n ?? 0),
      updateWebhookEndpoint: async (r) => {
        if (
          (await s.updEndpoint.run(r.url, r.name, r.isActive ? 1 : 0, r.updatedAtMs, r.organizationId, r.id))
            .changes !== 1
        )
          return false;
        await s.delSubs.run(r.id);
        await insertSubs(r);
        await s.followUrl.run(r.url, endpointLane(r.id), r.url);
        return true;
      },
      deleteWebhookEndpoint: async (org, id, nowMs) => {
        if ((await get(s.endpoint, org, id)) === undefined) return false;
        await s.orphan.run(nowMs, endpointLane(id));
        await s.delSubs.run(id);
        return (await s.delEndpoint.run(org, id)).changes === 1;
      },
      enqueueActivityEvent: async (activityId, created, nowMs) => {
        if ((await get(s.anyActivityTarget)) === undefined) return 0;
        const row = await get(s.activity, activityId);
        if (row === undefined) throw new Error(`activity ${activityId} is not in this transaction`);
        const a = toActivity(row);
        const scope = await scopeOf(a.organizationId);
        const endpoints = await all(s.subscribers, JSON.stringify(scope), 'ACTIVITY_UPDATES');
        const features: { org: string; url: string }[] = [];
        if (created)
          for (const org of scope) {
            const f = await get(s.feature, org);
            if (f !== undefined) features.push({ org, url: str(f.value) });
          }
        if (endpoints.length === 0 && features.length === 0) return 0;
        const eventId = await insertEvent(
          a.organizationId,
          'ACTIVITY_UPDATES',
          a.id,
          JSON.stringify(a),
          null,
          nowMs,
        );
        for (const e of endpoints)
          await insertDelivery(
            eventId,
            endpointLane(str(e.id)),
            'ENDPOINT',
            str(e.id),
            str(e.organization_id),
            str(e.url),
            nowMs,
          );
        for (const f of features) {
          // Deliveries still waiting follow the feature's current URL (as an endpoint's follow an update).
          await s.followUrl.run(f.url, `feature:${f.org}`, f.url);
          await insertDelivery(eventId, `feature:${f.org}`, 'FEATURE', null, f.org, f.url, nowMs);
        }
        return endpoints.length + features.length;
      },
      enqueueSendStatusEvent: async (sendId, nowMs) => {
        const row = await get(s.send, sendId);
        if (row === undefined) throw new Error(`send ${sendId} is not in this transaction`);
        const send = toSend(row);
        // A gap filler is the service's own transaction, not a send anyone asked for.
        if (send.kind === 'GAP_FILL') return 0;
        // turnkey-api.md 11.1: send-status events are scoped to the billing (top-level) organization.
        const parent = nstr((await get(s.org, send.organizationId))?.parent_id);
        const billing = parent ?? send.organizationId;
        const endpoints = await all(
          s.subscribers,
          JSON.stringify([billing]),
          'SEND_TRANSACTION_STATUS_UPDATES',
        );
        if (endpoints.length === 0) return 0;
        const body = JSON.stringify({
          type: 'transaction:status',
          organizationId: send.organizationId,
          parentOrganizationId: billing,
          msg: {
            sendTransactionStatusId: send.id,
            activityId: send.activityId,
            status: send.status,
            caip2: send.caip2,
            timestamp: String(Math.floor(send.updatedAtMs / 1000)),
            ...(send.status === 'INCLUDED' ? { txHash: send.txHash } : {}),
            ...(send.status === 'FAILED'
              ? {
                  error: {
                    message: send.errorMessage ?? 'the transaction failed',
                    ...(send.revertChainJson === null
                      ? {}
                      : { eth: { revertChain: JSON.parse(send.revertChainJson) as unknown } }),
                  },
                }
              : {}),
          },
        });
        const eventId = await insertEvent(
          send.organizationId,
          'SEND_TRANSACTION_STATUS_UPDATES',
          send.id,
          body,
          body,
          nowMs,
        );
        for (const e of endpoints)
          await insertDelivery(
            eventId,
            endpointLane(str(e.id)),
            'ENDPOINT',
            str(e.id),
            str(e.organization_id),
            str(e.url),
            nowMs,
          );
        return endpoints.length;
      },
      claimWebhookDeliveries: async (nowMs, leaseUntilMs, limit, busy, claimedBy) =>
        lease(await all(s.heads, nowMs, nowMs, JSON.stringify(busy), limit), nowMs, leaseUntilMs, claimedBy),
      recordWebhookAttempt: async (result) => {
        const a = result.attempt;
        const d = await get(s.delivery, a.deliveryId);
        if (d === undefined) return;
        await s.insAttempt.run(
          a.deliveryId,
          a.attempt,
          a.startedAtMs,
          a.latencyMs,
          a.statusCode,
          a.outcome,
          a.error,
          a.signingKeyId,
        );
        await s.setEventBody.run(result.bodyJson, str(d.event_id));
        await s.finish.run(
          result.state,
          a.attempt,
          result.nextAttemptAtMs,
          a.error,
          result.state === 'DELIVERED' ? a.startedAtMs + a.latencyMs : null,
          a.startedAtMs + a.latencyMs,
          a.deliveryId,
        );
      },
      claimWebhookLane: claimLane,
      releaseWebhookDeliveries: async (ids) => {
        for (const id of ids) await s.release.run(id);
      },
      redeliverWebhook: async (owners, id, nowMs) => {
        const d = await get(s.delivery, id);
        if (d === undefined || !owners.includes(str(d.owner_organization_id))) return undefined;
        await s.redeliver.run(nowMs, nowMs, nowMs, id);
        const after = await get(s.delivery, id);
        return after && toWebhookDelivery(after);
      },
      releaseWebhookLeases: async () => (await s.releaseLeases.run()).changes,
      insertWebhookSigningKey: async (r) => {
        await s.insKey.run(r.id, r.publicKey, r.sealedKey, r.createdAtMs, r.retiredAtMs);
      },
      retireWebhookSigningKeys: async (keep, nowMs) => (await s.retireKeys.run(nowMs, keep)).changes,
    },
    read: {
      listWebhookEndpoints: async (org) => Promise.all((await all(s.endpoints, org)).map(toEndpoint)),
      getWebhookEndpoint: async (org, id) => getEndpoint(org, id),
      getWebhookEvent: async (id) => {
        const r = await get(s.event, id);
        return (
          r && {
            id: str(r.id),
            organizationId: str(r.organization_id),
            eventType: str(r.event_type) as WebhookEventType,
            subjectId: str(r.subject_id),
            snapshotJson: str(r.snapshot_json),
            bodyJson: nstr(r.body_json),
            createdAtMs: num(r.created_at_ms),
          }
        );
      },
      getWebhookDelivery: async (id) => {
        const r = await get(s.delivery, id);
        return r && toWebhookDelivery(r);
      },
      listWebhookDeliveries: async (owner, f, page) => {
        const before =
          page.before === undefined
            ? Number.MAX_SAFE_INTEGER
            : num((await get(s.seqOf, page.before))?.seq ?? 0);
        const e = f.endpointId ?? null;
        const st = f.state ?? null;
        const ev = f.eventId ?? null;
        return (await all(s.deliveries, owner, before, e, e, st, st, ev, ev, page.limit)).map(
          toWebhookDelivery,
        );
      },
      listWebhookAttempts: async (id) =>
        (await all(s.attempts, id)).map((r) => ({
          deliveryId: str(r.delivery_id),
          attempt: num(r.attempt),
          startedAtMs: num(r.started_at_ms),
          latencyMs: num(r.latency_ms),
          statusCode: r.status_code === null || r.status_code === undefined ? null : num(r.status_code),
          outcome: str(r.outcome) as WebhookAttemptOutcome,
          error: nstr(r.error),
          signingKeyId: nstr(r.signing_key_id),
        })),
      listWebhookSigningKeys: async () =>
        (await all(s.keys)).map((r) => ({
          id: str(r.id),
          publicKey: str(r.public_key),
          sealedKey: bytes(r.sealed_key),
          createdAtMs: num(r.created_at_ms),
          retiredAtMs:
            r.retired_at_ms === null || r.retired_at_ms === undefined ? null : num(r.retired_at_ms),
        })),
      webhookBacklog: async (nowMs) => {
        const r = await get(s.backlog, nowMs);
        const n = (v: unknown) => (v === null || v === undefined ? null : num(v));
        return {
          pending: num(r?.pending ?? 0),
          oldestDueAtMs: n(r?.oldest_due),
          nextDueAtMs: n(r?.next_due),
        };
      },
    },
  };
}
// --- end webhooks ---
