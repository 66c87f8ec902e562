/**
 * Webhook retries and final states (issue 14): 2xx delivers; 5xx and silence retry; 429 waits for
 * Retry-After; 3xx and other 4xx end a delivery at once (the lane goes on); retries stop at the end
 * of the retry window; a failed delivery stays readable through list_webhook_deliveries and is sent
 * again, same event id, by redeliver_webhook_delivery; a slow receiver never delays another.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import {
  startWebhookReceiver,
  waitFor,
  type Answer,
  type ReceivedWebhook,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

let h: EmbeddedHarness;
let org: string;
const receivers: WebhookReceiver[] = [];

async function submit(path: string, type: string, parameters: unknown): Promise<Record<string, any>> {
  const res = await post(
    h.baseUrl,
    h.service.credentials,
    `/public/v1/submit/${path}`,
    envelope(type, org, parameters),
  );
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json.activity as Record<string, any>;
}

async function query(name: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await post(
    h.baseUrl,
    h.service.credentials,
    `/public/v1/query/${name}`,
    JSON.stringify({ organizationId: org, ...body }),
  );
  if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** A receiver with its own endpoint (ACTIVITY_UPDATES); returns both. */
async function receiverWithEndpoint(answer: (r: ReceivedWebhook, n: number) => Answer) {
  const receiver = await startWebhookReceiver(answer);
  receivers.push(receiver);
  const a = await submit('create_webhook_endpoint', 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', {
    url: `${receiver.url}/hook`,
    name: `r ${randomUUID()}`,
    subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
  });
  return { receiver, endpointId: a.result.createWebhookEndpointResult.endpointId as string };
}

async function deleteEndpoint(endpointId: string) {
  await submit('delete_webhook_endpoint', 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', { endpointId });
}

const tag = async () =>
  (
    await submit('create_user_tag', 'ACTIVITY_TYPE_CREATE_USER_TAG', {
      userTagName: `t ${randomUUID()}`,
      userIds: [],
    })
  ).id as string;

async function deliveriesOf(endpointId: string): Promise<Record<string, any>[]> {
  return (await query('list_webhook_deliveries', { endpointId })).deliveries;
}

beforeAll(async () => {
  h = await startEmbedded({
    allowPrivateNetwork: true,
    webhooks: { baseDelayMs: 20, maxDelayMs: 100, pollMs: 100, maxAgeMs: 2_000, attemptTimeoutMs: 30_000 },
  });
  org = h.service.credentials.organizationId;
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await h?.close();
});

describe('webhook retries', () => {
  it('retries 5xx until a 2xx, recording each attempt, and keeps the event id', async () => {
    const { receiver, endpointId } = await receiverWithEndpoint((_r, n) => (n < 3 ? { status: 503 } : {}));
    // The endpoint's own creation is its first event; the tag is the second.
    const id = await tag();
    await waitFor(
      async () =>
        (await deliveriesOf(endpointId)).length === 2 &&
        (await deliveriesOf(endpointId))[0]?.status === 'DELIVERED',
      10_000,
      'delivery',
    );
    expect(receiver.delivered().some((r) => JSON.parse(r.body).id === id)).toBe(true);
    const [latest] = await deliveriesOf(endpointId);
    expect(latest).toMatchObject({ status: 'DELIVERED', eventType: 'ACTIVITY_UPDATES', endpointId });
    const all = await deliveriesOf(endpointId);
    const attempts = all.flatMap((d) => d.attempts);
    expect(attempts.filter((a) => a.outcome === 'RETRY').map((a) => a.statusCode)).toEqual([503, 503, 503]);
    expect(
      attempts
        .filter((a) => a.outcome === 'RETRY')
        .every((a) => a.error === 'the receiver answered HTTP 503'),
    ).toBe(true);
    // Retries of one event carry one event id and a fresh timestamp and signature each time.
    const first = receiver.received.filter(
      (r) => r.headers['x-turnkey-event-id'] === receiver.received[0]!.headers['x-turnkey-event-id'],
    );
    expect(first.length).toBeGreaterThan(1);
    expect(new Set(first.map((r) => r.headers['x-turnkey-signature'])).size).toBe(first.length);
    await deleteEndpoint(endpointId);
  });

  it('ends a delivery at a 4xx or a 3xx without following it, and the lane goes on', async () => {
    const { receiver, endpointId } = await receiverWithEndpoint((r) => {
      const status =
        JSON.parse(r.body).type === 'ACTIVITY_TYPE_CREATE_USER_TAG'
          ? r.body.includes('"gone')
            ? 410
            : 200
          : 200;
      return status === 410
        ? { status }
        : r.body.includes('"moved')
          ? { status: 302, headers: { location: 'http://10.0.0.1/' } }
          : { status };
    });
    const gone = (
      await submit('create_user_tag', 'ACTIVITY_TYPE_CREATE_USER_TAG', {
        userTagName: `"gone ${randomUUID()}`,
        userIds: [],
      })
    ).id;
    const moved = (
      await submit('create_user_tag', 'ACTIVITY_TYPE_CREATE_USER_TAG', {
        userTagName: `"moved ${randomUUID()}`,
        userIds: [],
      })
    ).id;
    const after = await tag();
    await waitFor(
      () => receiver.delivered().some((r) => JSON.parse(r.body).id === after),
      10_000,
      'the next event',
    );
    const list = await deliveriesOf(endpointId);
    const bySubject = async (id: string) => {
      for (const d of list) {
        const r = receiver.received.find((x) => x.headers['x-turnkey-event-id'] === d.eventId);
        if (r !== undefined && JSON.parse(r.body).id === id) return d;
      }
      throw new Error(`no delivery for ${id}`);
    };
    const g = await bySubject(gone);
    expect(g).toMatchObject({
      status: 'FAILED',
      attemptCount: 1,
      lastError: 'the receiver answered HTTP 410',
    });
    expect(g.attempts).toMatchObject([{ statusCode: 410, outcome: 'FAILED' }]);
    const m = await bySubject(moved);
    expect(m).toMatchObject({ status: 'FAILED', attemptCount: 1 });
    expect(m.attempts[0].statusCode).toBe(302);
    // Nothing more is sent for a finished delivery.
    expect(receiver.received.filter((r) => JSON.parse(r.body).id === gone)).toHaveLength(1);
    expect(receiver.received.filter((r) => JSON.parse(r.body).id === moved)).toHaveLength(1);
    await deleteEndpoint(endpointId);
  });

  it('waits for Retry-After on a 429', async () => {
    const { receiver, endpointId } = await receiverWithEndpoint((_r, n) =>
      n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : {},
    );
    // The receiver's 200 comes before the attempt is recorded: wait for the record.
    await waitFor(
      async () => (await deliveriesOf(endpointId))[0]?.status === 'DELIVERED',
      10_000,
      'delivery after 429',
    );
    const [first, second] = receiver.received;
    expect(second!.atMs - first!.atMs).toBeGreaterThanOrEqual(1_000);
    const [d] = await deliveriesOf(endpointId);
    expect(d!.attempts.map((a: any) => [a.statusCode, a.outcome])).toEqual([
      [429, 'RETRY'],
      [200, 'DELIVERED'],
    ]);
    await deleteEndpoint(endpointId);
  });

  it('stops retrying at the end of the retry window, keeps the failure readable, and re-delivers on request', async () => {
    let healthy = false;
    const { receiver, endpointId } = await receiverWithEndpoint(() => (healthy ? {} : { status: 500 }));
    await waitFor(
      async () => (await deliveriesOf(endpointId))[0]?.status === 'FAILED',
      15_000,
      'the final failure',
    );
    const [failed] = await deliveriesOf(endpointId);
    expect(failed!.attemptCount).toBeGreaterThan(1);
    expect(failed!.lastError).toMatch(/retries stopped after \d+ attempts/);
    const failedEvent = failed!.eventId;
    const before = receiver.received.length;
    expect(receiver.delivered()).toHaveLength(0);

    healthy = true;
    const re = await submit('redeliver_webhook_delivery', 'ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERY', {
      deliveryId: failed!.deliveryId,
    });
    expect(re.result.redeliverWebhookDeliveryResult).toEqual({
      deliveryId: failed!.deliveryId,
      eventId: failedEvent,
    });
    await waitFor(
      () => receiver.delivered().some((r) => r.headers['x-turnkey-event-id'] === failedEvent),
      10_000,
      'the re-delivery',
    );
    expect(receiver.received.length).toBeGreaterThan(before);
    await waitFor(
      async () =>
        (await deliveriesOf(endpointId)).find((d) => d.deliveryId === failed!.deliveryId)?.status ===
        'DELIVERED',
      10_000,
      'the re-delivery recorded',
    );
    const again = (await deliveriesOf(endpointId)).find((d) => d.deliveryId === failed!.deliveryId);
    expect(again).toMatchObject({ status: 'DELIVERED', eventId: failedEvent });
    // A pending or unknown delivery is refused, naming the field.
    const refused = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/redeliver_webhook_delivery',
      envelope('ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERY', org, { deliveryId: randomUUID() }),
    );
    expect(refused.status).toBe(404);
    expect(String(refused.json.message)).toContain('parameters.deliveryId');
    await deleteEndpoint(endpointId);
  });

  it('does not let a receiver that takes 10 s per answer delay another receiver', async () => {
    const slow = await receiverWithEndpoint(() => ({ delayMs: 10_000 }));
    const fast = await receiverWithEndpoint(() => ({}));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await tag());
    await waitFor(
      () => ids.every((id) => fast.receiver.delivered().some((r) => JSON.parse(r.body).id === id)),
      9_000,
      'the fast receiver',
    );
    // The slow receiver is still on its first answer.
    expect(slow.receiver.delivered()).toHaveLength(0);
    expect(slow.receiver.received.length).toBe(1);
    await slow.receiver.close();
    await deleteEndpoint(slow.endpointId);
    await deleteEndpoint(fast.endpointId);
  });

  it('sends the feature webhook’s waiting deliveries to its new URL when the URL changes', async () => {
    const dead = await startWebhookReceiver(() => ({ status: 500 }));
    const alive = await startWebhookReceiver(() => ({}));
    receivers.push(dead, alive);
    const setFeature = (url: string) =>
      submit('set_organization_feature', 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE', {
        name: 'FEATURE_NAME_WEBHOOK',
        value: url,
      });
    const first = (await setFeature(`${dead.url}/feature`)).id as string;
    await waitFor(() => dead.received.length > 0, 5_000, 'a failing attempt');
    const second = (await setFeature(`${alive.url}/feature`)).id as string;
    await waitFor(() => alive.delivered().length >= 2, 10_000, 'both at the new URL');
    expect(alive.delivered().map((r) => JSON.parse(r.body).id)).toEqual([first, second]);
    await submit('remove_organization_feature', 'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE', {
      name: 'FEATURE_NAME_WEBHOOK',
    });
  });

  it('lists deliveries with their attempts and checks the query’s fields', async () => {
    const bad = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/list_webhook_deliveries',
      JSON.stringify({ organizationId: org, status: 'LOST' }),
    );
    expect(bad.status).toBe(400);
    expect(String(bad.json.message)).toContain('status');
    const all = (await query('list_webhook_deliveries', { limit: 1000 })).deliveries;
    expect(all.length).toBeGreaterThan(0);
    for (const d of all) expect(d).not.toHaveProperty('body');
  });
});
