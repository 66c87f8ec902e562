/**
 * Webhooks (issue 14): endpoints managed through Turnkey's unmodified client, deliveries to a real
 * receiver on 127.0.0.1 verified by @turnkey/crypto's verifyTurnkeyWebhookSignature against keys
 * fetched from our JWKS, the feature webhook of the seed, sub-organization fan-out, the outbox
 * written with the activity, and the deliveries query and re-delivery activity.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { insertUserWithApiKey } from './helpers/users.js';
import {
  fetchWebhookKeys,
  startWebhookReceiver,
  verifies,
  waitFor,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';
import { envelope, post } from './helpers/http.js';
import { UUID_V7 } from './helpers/ids.js';

let h: EmbeddedHarness;
let api: TurnkeyClient;
let org: string;
let receiver: WebhookReceiver;

const ts = () => String(Date.now());

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

async function createEndpoint(
  client: TurnkeyClient,
  organizationId: string,
  url: string,
  eventTypes: string[] = ['ACTIVITY_UPDATES'],
): Promise<string> {
  const res = await client.createWebhookEndpoint({
    type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
    timestampMs: ts(),
    organizationId,
    parameters: {
      url,
      name: `hook ${randomUUID()}`,
      subscriptions: eventTypes.map((eventType) => ({ eventType })),
    },
  });
  return String(res.activity.result.createWebhookEndpointResult?.endpointId);
}

async function deleteEndpoint(client: TurnkeyClient, organizationId: string, endpointId: string) {
  await client.deleteWebhookEndpoint({
    type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT',
    timestampMs: ts(),
    organizationId,
    parameters: { endpointId },
  });
}

/** A cheap activity: a user tag with a fresh name. */
async function tag(client: TurnkeyClient, organizationId: string): Promise<string> {
  const res = await client.createUserTag({
    type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
    timestampMs: ts(),
    organizationId,
    parameters: { userTagName: `t-${randomUUID()}`, userIds: [] },
  });
  return res.activity.id;
}

beforeAll(async () => {
  h = await startEmbedded({ allowPrivateNetwork: true, webhooks: { baseDelayMs: 20, pollMs: 100 } });
  api = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(h.service.credentials));
  org = h.service.credentials.organizationId;
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

describe('webhook endpoints', () => {
  it('creates, lists, updates and deletes an endpoint with Turnkey’s shapes', async () => {
    const created = await api.createWebhookEndpoint({
      type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        url: `${receiver.url}/crud`,
        name: 'crud hook',
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
      },
    });
    expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const result = created.activity.result.createWebhookEndpointResult;
    const endpointId = String(result?.endpointId);
    expect(result?.webhookEndpoint).toMatchObject({
      endpointId,
      organizationId: org,
      url: `${receiver.url}/crud`,
      name: 'crud hook',
      isActive: true,
      subscriptions: [{ eventType: 'ACTIVITY_UPDATES', isActive: true }],
    });
    const listed = await api.listWebhookEndpoints({ organizationId: org });
    expect(listed.webhookEndpoints.map((e) => e.endpointId)).toContain(endpointId);

    const updated = await api.updateWebhookEndpoint({
      type: 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT',
      timestampMs: ts(),
      organizationId: org,
      parameters: { endpointId, name: 'renamed', isActive: false },
    });
    expect(updated.activity.result.updateWebhookEndpointResult?.webhookEndpoint).toMatchObject({
      endpointId,
      name: 'renamed',
      isActive: false,
      url: `${receiver.url}/crud`,
    });
    const after = (await api.listWebhookEndpoints({ organizationId: org })).webhookEndpoints.find(
      (e) => e.endpointId === endpointId,
    );
    expect(after).toMatchObject({ name: 'renamed', isActive: false });

    await deleteEndpoint(api, org, endpointId);
    const gone = await api.listWebhookEndpoints({ organizationId: org });
    expect(gone.webhookEndpoints.map((e) => e.endpointId)).not.toContain(endpointId);
  });

  it.each([
    [{ url: 'ftp://hooks.example.com/x', name: 'n' }, 'parameters.url'],
    [{ url: 'https://user:pw@hooks.example.com/x', name: 'n' }, 'parameters.url'],
    [{ name: 'n' }, 'parameters.url'],
    [{ url: 'https://hooks.example.com/x' }, 'parameters.name'],
    [{ url: 'https://hooks.example.com/x', name: '  ' }, 'parameters.name'],
    [
      { url: 'https://hooks.example.com/x', name: 'n', subscriptions: [{ eventType: 'NOPE' }] },
      'parameters.subscriptions.0.eventType',
    ],
    [
      {
        url: 'https://hooks.example.com/x',
        name: 'n',
        subscriptions: [{ eventType: 'BALANCE_CONFIRMED_UPDATES' }],
      },
      'parameters.subscriptions.0.eventType',
    ],
    [
      {
        url: 'https://hooks.example.com/x',
        name: 'n',
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }, { eventType: 'ACTIVITY_UPDATES' }],
      },
      'parameters.subscriptions.1.eventType',
    ],
  ])('refuses %j naming %s', async (parameters, field) => {
    const res = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/create_webhook_endpoint',
      envelope('ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', org, parameters),
    );
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toContain(field);
  });

  it('refuses to update or delete an endpoint that does not exist', async () => {
    const e = await refusal(
      api.deleteWebhookEndpoint({
        type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT',
        timestampMs: ts(),
        organizationId: org,
        parameters: { endpointId: randomUUID() },
      }),
    );
    expect(e.message).toContain('parameters.endpointId');
  });
});

describe('webhook delivery', () => {
  it('delivers each activity to a subscribed endpoint, signed so that @turnkey/crypto verifies it with our JWKS', async () => {
    const endpointId = await createEndpoint(api, org, `${receiver.url}/signed`);
    const activityId = await tag(api, org);
    await waitFor(
      () => receiver.received.some((r) => r.path === '/signed' && JSON.parse(r.body).id === activityId),
      10_000,
      'the delivery',
    );
    const got = receiver.received.find((r) => r.path === '/signed' && JSON.parse(r.body).id === activityId)!;
    const keys = await fetchWebhookKeys(h.baseUrl);
    expect(keys).toHaveLength(1);
    expect(verifies(got, keys)).toBe(true);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'x-turnkey-organization-id': org,
      'x-turnkey-event-type': 'ACTIVITY_UPDATES',
      'x-turnkey-webhook-version': '1',
      'x-turnkey-signature-algorithm': 'ed25519',
      'x-turnkey-signature-version': 'v1',
      'x-turnkey-signature-key-id': keys[0]!.keyId,
    });
    // The body is the activity in the API's own encoding.
    const body = JSON.parse(got.body);
    const fromApi = await api.getActivity({ organizationId: org, activityId });
    expect(body).toEqual(JSON.parse(JSON.stringify(fromApi.activity)));
    // A changed byte breaks the signature.
    expect(verifies({ ...got, body: got.body.replace('COMPLETED', 'COMPLETEd') }, keys)).toBe(false);
    await deleteEndpoint(api, org, endpointId);
  });

  it('delivers the seed’s feature webhook for every new activity, the set_organization_feature call included', async () => {
    const url = `${receiver.url}/feature`;
    const set = await api.setOrganizationFeature({
      type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
      timestampMs: ts(),
      organizationId: org,
      parameters: { name: 'FEATURE_NAME_WEBHOOK', value: url },
    });
    const tagged = await tag(api, org);
    const ids = [set.activity.id, tagged];
    await waitFor(
      () =>
        ids.every((id) =>
          receiver.received.some((r) => r.path === '/feature' && JSON.parse(r.body).id === id),
        ),
      10_000,
      'both feature deliveries',
    );
    await api.removeOrganizationFeature({
      type: 'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
      timestampMs: ts(),
      organizationId: org,
      parameters: { name: 'FEATURE_NAME_WEBHOOK' },
    });
  });

  it('sends a parent’s endpoint its sub-organizations’ events, and a sub-organization’s endpoint only its own', async () => {
    const subId = randomUUID();
    const now = Date.now();
    await h.service.store.write((tx) =>
      tx.insertOrganization({
        id: subId,
        name: `sub ${subId}`,
        parentId: org,
        rootQuorumThreshold: 1,
        createdAtMs: now,
      }),
    );
    const { key } = await insertUserWithApiKey(h.service.store, {
      organizationId: subId,
      name: 'sub root',
      isRoot: true,
    });
    const sub = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(key));
    const parentHook = await createEndpoint(api, org, `${receiver.url}/parent`);
    const subHook = await createEndpoint(sub, subId, `${receiver.url}/sub`);
    const inSub = await tag(sub, subId);
    const inParent = await tag(api, org);
    const seen = (path: string, id: string) =>
      receiver.received.some((r) => r.path === path && JSON.parse(r.body).id === id);
    await waitFor(
      () => seen('/parent', inSub) && seen('/parent', inParent) && seen('/sub', inSub),
      10_000,
      'fan-out',
    );
    // Everything to /parent or /sub is delivered, so a sub-org endpoint that got the parent's event would show by now.
    expect(seen('/sub', inParent)).toBe(false);
    const toSub = receiver.received.find((r) => r.path === '/sub')!;
    expect(toSub.headers['x-turnkey-organization-id']).toBe(subId);
    const toParent = receiver.received.find((r) => r.path === '/parent' && JSON.parse(r.body).id === inSub)!;
    expect(toParent.headers['x-turnkey-organization-id']).toBe(org);
    // A send-status subscription belongs to the billing (parent) organization.
    const e = await refusal(
      sub.createWebhookEndpoint({
        type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
        timestampMs: ts(),
        organizationId: subId,
        parameters: {
          url: `${receiver.url}/x`,
          name: 'n',
          subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }],
        },
      }),
    );
    expect(e.message).toContain('parameters.subscriptions.0.eventType');
    await deleteEndpoint(api, org, parentHook);
    await deleteEndpoint(sub, subId, subHook);
  });

  it('reports every state change of an activity that waits for consensus, with one event id per change', async () => {
    // Consensus needs a second root: raise the threshold to 2 with another root user.
    const subId = randomUUID();
    const now = Date.now();
    await h.service.store.write((tx) =>
      tx.insertOrganization({
        id: subId,
        name: `q ${subId}`,
        parentId: null,
        rootQuorumThreshold: 2,
        createdAtMs: now,
      }),
    );
    const a = await insertUserWithApiKey(h.service.store, { organizationId: subId, name: 'a', isRoot: true });
    const b = await insertUserWithApiKey(h.service.store, { organizationId: subId, name: 'b', isRoot: true });
    const first = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(a.key));
    const second = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(b.key));
    // Created while the threshold is 2: this activity itself waits; approve it to get the endpoint.
    const pending = await first.createWebhookEndpoint({
      type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
      timestampMs: ts(),
      organizationId: subId,
      parameters: {
        url: `${receiver.url}/quorum`,
        name: 'q',
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
      },
    });
    expect(pending.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await second.approveActivity({
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      timestampMs: ts(),
      organizationId: subId,
      parameters: { fingerprint: pending.activity.fingerprint },
    });
    const res = await first.createUserTag({
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
      timestampMs: ts(),
      organizationId: subId,
      parameters: { userTagName: 'needs two', userIds: [] },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await second.rejectActivity({
      type: 'ACTIVITY_TYPE_REJECT_ACTIVITY',
      timestampMs: ts(),
      organizationId: subId,
      parameters: { fingerprint: res.activity.fingerprint },
    });
    const of = () =>
      receiver.received.filter((r) => r.path === '/quorum' && JSON.parse(r.body).id === res.activity.id);
    await waitFor(() => of().length === 2, 10_000, 'both state changes');
    expect(of().map((r) => JSON.parse(r.body).status)).toEqual([
      'ACTIVITY_STATUS_CONSENSUS_NEEDED',
      'ACTIVITY_STATUS_REJECTED',
    ]);
    const ids = of().map((r) => r.headers['x-turnkey-event-id']);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(UUID_V7); // time-ordered: the events' key grows at its end
  });

  it('writes no event for a request that was refused, and none when nobody listens', async () => {
    const endpointId = await createEndpoint(api, org, `${receiver.url}/refused`);
    const bad = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/create_user_tag',
      envelope('ACTIVITY_TYPE_CREATE_USER_TAG', org, { userIds: [] }),
    );
    expect(bad.status).toBe(400);
    const good = await tag(api, org);
    await waitFor(
      () => receiver.received.some((r) => r.path === '/refused' && JSON.parse(r.body).id === good),
      10_000,
      'the next event',
    );
    // Only the endpoint's own creation and the good activity: the refused request left nothing.
    const toRefused = await h.service.store.listWebhookDeliveries(org, { endpointId }, { limit: 10 });
    expect(toRefused).toHaveLength(2);
    await deleteEndpoint(api, org, endpointId);

    const lonely = randomUUID();
    await h.service.store.write((tx) =>
      tx.insertOrganization({
        id: lonely,
        name: `l ${lonely}`,
        parentId: null,
        rootQuorumThreshold: 1,
        createdAtMs: Date.now(),
      }),
    );
    const { key } = await insertUserWithApiKey(h.service.store, {
      organizationId: lonely,
      name: 'l',
      isRoot: true,
    });
    await tag(new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(key)), lonely);
    expect(await h.service.store.listWebhookDeliveries(lonely, {}, { limit: 10 })).toEqual([]);
  });

  it('signs with a rotated key at once and keeps the old key published', async () => {
    const before = await fetchWebhookKeys(h.baseUrl);
    const fresh = { id: (await h.service.rotateWebhookSigningKey()).keyId };
    const after = await fetchWebhookKeys(h.baseUrl);
    expect(after.map((k) => k.keyId).sort()).toEqual([...before.map((k) => k.keyId), fresh.id].sort());
    const endpointId = await createEndpoint(api, org, `${receiver.url}/rotated`);
    // The dispatcher re-reads the signing key within seconds of a rotation.
    let id = '';
    await waitFor(
      async () => {
        id = await tag(api, org);
        await waitFor(
          () => receiver.received.some((r) => r.path === '/rotated' && JSON.parse(r.body).id === id),
          10_000,
          'delivery',
        );
        const r = receiver.received.find((x) => x.path === '/rotated' && JSON.parse(x.body).id === id)!;
        return r.headers['x-turnkey-signature-key-id'] === fresh.id;
      },
      15_000,
      'a delivery signed by the new key',
    );
    const r = receiver.received.find((x) => x.path === '/rotated' && JSON.parse(x.body).id === id)!;
    expect(verifies(r, after)).toBe(true);
    expect(verifies(r, before)).toBe(false);
    await deleteEndpoint(api, org, endpointId);
  }, 30_000);

  it('exposes delivery metrics with closed label sets', async () => {
    const text = await (await fetch(`${h.baseUrl}/metrics`)).text();
    expect(text).toMatch(/countersign_webhook_attempts_total\{source="ENDPOINT",outcome="DELIVERED"\} [1-9]/);
    expect(text).toMatch(/countersign_webhook_attempt_seconds_count [1-9]/);
    expect(text).toMatch(/countersign_webhook_backlog \d+/);
    expect(text).toMatch(/countersign_webhook_oldest_due_seconds [0-9.]+/);
    expect(text).not.toContain(receiver.url);
  });
});
