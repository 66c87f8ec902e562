/**
 * Webhook endpoints (turnkey-api.md 11.1): create, update and delete as activities with Turnkey's
 * names and shapes, `list_webhook_endpoints` as a query; plus our own query of deliveries with their
 * attempts and an activity that queues one delivery again. URLs pass the outbound guard at creation
 * (scheme, credentials, literal addresses, local names) and again at every dial.
 */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid, missing } from '../../shared/errors.js';
import { checkOutboundUrl } from '../../shared/outbound/guard.js';
import {
  WEBHOOK_DELIVERY_STATES,
  WEBHOOK_EVENT_TYPES,
  type Store,
  type WebhookAttemptRecord,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
  type WebhookEventType,
  type WebhookSubscriptionRecord,
  type OrganizationRecord,
  type UserRecord,
} from '../store/types.js';
import { timestampOf } from '../api/envelope.js';
import { webhookContextOf } from '../webhooks/context.js';
import {
  asObject,
  notFound,
  optArray,
  optBool,
  optNumber,
  optString,
  reqString,
  reqUuid,
  type Params,
} from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

const P = 'parameters';
export const MAX_WEBHOOK_ENDPOINTS_PER_ORGANIZATION = 10;
const MAX_URL_LENGTH = 2048;
const MAX_NAME_LENGTH = 256;
/** Event types Turnkey has that this service does not produce: refused, so nothing waits in vain. */
const UNSUPPORTED_EVENT_TYPES = ['BALANCE_CONFIRMED_UPDATES', 'BALANCE_FINALIZED_UPDATES'];
/** Scoped to the billing (top-level) organization (turnkey-api.md 11.1). */
const BILLING_SCOPED: readonly WebhookEventType[] = ['SEND_TRANSACTION_STATUS_UPDATES'];

function readUrl(ctx: ActivityContext, p: Params, required: boolean): string | undefined {
  const field = `${P}.url`;
  const v = required ? reqString(p, 'url', P) : optString(p, 'url', P);
  if (v === undefined) return undefined;
  if (v.length > MAX_URL_LENGTH) throw invalid(field, `must be at most ${MAX_URL_LENGTH} characters`);
  checkOutboundUrl(v, webhookContextOf(ctx.store).policy, field);
  return v;
}

function readName(p: Params, required: boolean): string | undefined {
  const v = required ? reqString(p, 'name', P) : optString(p, 'name', P);
  if (v === undefined) return undefined;
  if (v.trim() === '') throw invalid(`${P}.name`, 'must not be empty');
  if (v.length > MAX_NAME_LENGTH) throw invalid(`${P}.name`, `must be at most ${MAX_NAME_LENGTH} characters`);
  return v;
}

function readSubscriptions(org: OrganizationRecord, p: Params): WebhookSubscriptionRecord[] {
  const list = optArray(p, 'subscriptions', P) ?? [];
  if (list.length > WEBHOOK_EVENT_TYPES.length)
    throw invalid(`${P}.subscriptions`, `must have at most ${WEBHOOK_EVENT_TYPES.length} entries`);
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const at = `${P}.subscriptions.${i}`;
    const s = asObject(raw, at);
    const eventType = reqString(s, 'eventType', at);
    if (UNSUPPORTED_EVENT_TYPES.includes(eventType))
      throw invalid(`${at}.eventType`, `${eventType} events are not produced by this service`);
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(eventType))
      throw invalid(
        `${at}.eventType`,
        `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}; got '${eventType}'`,
      );
    if (seen.has(eventType)) throw invalid(`${at}.eventType`, `${eventType} is listed twice`);
    seen.add(eventType);
    const type = eventType as WebhookEventType;
    if (BILLING_SCOPED.includes(type) && org.parentId !== null)
      throw new CountersignError(
        'REQUEST_NOT_AUTHORIZED',
        `${at}.eventType: ${type} is scoped to the parent (billing) organization; subscribe there`,
        { field: `${at}.eventType` },
      );
    const filters = optString(s, 'filtersJson', at);
    if (filters !== undefined && filters !== '')
      throw invalid(`${at}.filtersJson`, 'subscription filters are not supported; omit filtersJson');
    return { eventType: type, filtersJson: null, isActive: optBool(s, 'isActive', at) ?? true };
  });
}

/** v1WebhookEndpointData, from declared fields only. */
export function webhookEndpointJson(r: WebhookEndpointRecord): Record<string, unknown> {
  return {
    endpointId: r.id,
    organizationId: r.organizationId,
    url: r.url,
    name: r.name,
    isActive: r.isActive,
    subscriptions: r.subscriptions.map((s) => ({ eventType: s.eventType, isActive: s.isActive })),
    createdAt: timestampOf(r.createdAtMs),
    updatedAt: timestampOf(r.updatedAtMs),
  };
}

const endpointNotFound = () => notFound(`${P}.endpointId`, 'webhook endpoint');

export const WEBHOOK_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
    path: 'create_webhook_endpoint',
    intentKey: 'createWebhookEndpointIntent',
    resultKey: 'createWebhookEndpointResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const url = readUrl(ctx, p, true) as string;
      const name = readName(p, true) as string;
      const subscriptions = readSubscriptions(ctx.organization, p);
      const record: WebhookEndpointRecord = {
        id: randomUUID(),
        organizationId: ctx.organization.id,
        url,
        name,
        isActive: true,
        subscriptions,
        createdAtMs: ctx.nowMs,
        updatedAtMs: ctx.nowMs,
      };
      return {
        result: { endpointId: record.id, webhookEndpoint: webhookEndpointJson(record) },
        write: async (tx) => {
          if (
            (await tx.countWebhookEndpoints(record.organizationId)) >= MAX_WEBHOOK_ENDPOINTS_PER_ORGANIZATION
          )
            throw new CountersignError(
              'RESOURCE_LIMIT_EXCEEDED',
              `${P}.url: an organization has at most ${MAX_WEBHOOK_ENDPOINTS_PER_ORGANIZATION} webhook endpoints`,
              { field: `${P}.url` },
            );
          await tx.insertWebhookEndpoint(record);
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT',
    path: 'update_webhook_endpoint',
    intentKey: 'updateWebhookEndpointIntent',
    resultKey: 'updateWebhookEndpointResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'endpointId', P);
      const url = readUrl(ctx, p, false);
      const name = readName(p, false);
      const isActive = optBool(p, 'isActive', P);
      const current = await ctx.store.getWebhookEndpoint(ctx.organization.id, id);
      if (current === undefined) throw endpointNotFound();
      const next: WebhookEndpointRecord = {
        ...current,
        url: url ?? current.url,
        name: name ?? current.name,
        isActive: isActive ?? current.isActive,
        updatedAtMs: ctx.nowMs,
      };
      return {
        result: { endpointId: id, webhookEndpoint: webhookEndpointJson(next) },
        write: async (tx) => {
          if (!(await tx.updateWebhookEndpoint(next))) throw endpointNotFound();
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT',
    path: 'delete_webhook_endpoint',
    intentKey: 'deleteWebhookEndpointIntent',
    resultKey: 'deleteWebhookEndpointResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'endpointId', P);
      if ((await ctx.store.getWebhookEndpoint(ctx.organization.id, id)) === undefined)
        throw endpointNotFound();
      return {
        result: { endpointId: id },
        write: async (tx) => {
          if (!(await tx.deleteWebhookEndpoint(ctx.organization.id, id, ctx.nowMs))) throw endpointNotFound();
        },
      };
    },
  },
  {
    // Ours (Turnkey has no such activity): queues a delivered or failed delivery again, same event
    // id, with a fresh retry window.
    type: 'ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERY',
    path: 'redeliver_webhook_delivery',
    intentKey: 'redeliverWebhookDeliveryIntent',
    resultKey: 'redeliverWebhookDeliveryResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'deliveryId', P);
      const d = await ctx.store.getWebhookDelivery(id);
      const field = `${P}.deliveryId`;
      if (d === undefined || d.ownerOrganizationId !== ctx.organization.id)
        throw notFound(field, 'webhook delivery');
      if (d.state === 'PENDING')
        throw invalid(
          field,
          'the delivery is still pending; only a delivered or failed one can be sent again',
        );
      return {
        result: { deliveryId: d.id, eventId: d.eventId },
        write: async (tx) => {
          if ((await tx.redeliverWebhook([ctx.organization.id], id, ctx.nowMs)) === undefined)
            throw notFound(field, 'webhook delivery');
        },
      };
    },
  },
];

/** A delivery with its attempts, from declared fields only (never the body, which may be large). */
function deliveryJson(d: WebhookDeliveryRecord, attempts: readonly WebhookAttemptRecord[]) {
  return {
    deliveryId: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    source: d.source,
    ...(d.endpointId === null ? {} : { endpointId: d.endpointId }),
    url: d.url,
    status: d.state,
    attemptCount: d.attempts,
    ...(d.state === 'PENDING' ? { nextAttemptAt: timestampOf(d.nextAttemptAtMs) } : {}),
    ...(d.lastError === null ? {} : { lastError: d.lastError }),
    ...(d.deliveredAtMs === null ? {} : { deliveredAt: timestampOf(d.deliveredAtMs) }),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: timestampOf(a.startedAtMs),
      latencyMs: String(a.latencyMs),
      ...(a.statusCode === null ? {} : { statusCode: a.statusCode }),
      outcome: a.outcome,
      ...(a.error === null ? {} : { error: a.error }),
      ...(a.signingKeyId === null ? {} : { signatureKeyId: a.signingKeyId }),
    })),
    createdAt: timestampOf(d.createdAtMs),
    updatedAt: timestampOf(d.updatedAtMs),
  };
}

interface WebhookQueryContext {
  readonly store: Store;
  readonly organization: OrganizationRecord;
  readonly user: UserRecord;
}

export const WEBHOOK_QUERIES: Record<
  string,
  (ctx: WebhookQueryContext, body: Params) => Promise<Record<string, unknown>>
> = {
  list_webhook_endpoints: async (ctx) => ({
    webhookEndpoints: (await ctx.store.listWebhookEndpoints(ctx.organization.id)).map(webhookEndpointJson),
  }),
  /** Ours: deliveries to the organization's receivers, newest first, each with its attempts. */
  list_webhook_deliveries: async (ctx, body) => {
    const endpointId = optString(body, 'endpointId', 'body');
    const eventId = optString(body, 'eventId', 'body');
    const status = optString(body, 'status', 'body');
    if (status !== undefined && !(WEBHOOK_DELIVERY_STATES as readonly string[]).includes(status))
      throw invalid('status', `must be one of ${WEBHOOK_DELIVERY_STATES.join(', ')}`);
    const limit = optNumber(body, 'limit', 'body') ?? 100;
    if (limit < 1 || limit > 1000) throw invalid('limit', 'must be between 1 and 1000');
    const before = optString(body, 'before', 'body');
    if (before !== undefined && before === '') throw missing('before');
    const list = await ctx.store.listWebhookDeliveries(
      ctx.organization.id,
      { endpointId, eventId, state: status as WebhookDeliveryRecord['state'] | undefined },
      { limit, before },
    );
    const deliveries = [];
    for (const d of list) deliveries.push(deliveryJson(d, await ctx.store.listWebhookAttempts(d.id)));
    return { deliveries };
  },
};
