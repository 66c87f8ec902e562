/**
 * Webhook URLs cannot reach inside (issue 14): without --allow-private-network, loopback, private,
 * link-local (metadata) and local names are refused at creation, and a name that resolves to such an
 * address is refused at dial time. No socket is ever opened here: DNS answers come from a lookup the
 * test controls, and the connect function fails the test if it is ever reached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { waitFor } from './helpers/webhook-receiver.js';

let h: EmbeddedHarness;
let org: string;
const dialled: string[] = [];
/** What the test's resolver answers for each name. */
const dns: Record<string, string> = {
  'private.hooks.test': '10.1.2.3',
  'metadata.hooks.test': '169.254.169.254',
  'loop.hooks.test': '127.0.0.1',
  'v6.hooks.test': 'fd00::7',
};

beforeAll(async () => {
  h = await startEmbedded({
    webhooks: {
      pollMs: 50,
      resolve: async (host) => {
        const address = dns[host];
        if (address === undefined) throw new Error(`no answer for ${host}`);
        return [{ address, family: address.includes(':') ? 6 : 4 }];
      },
      createConnection: (): Socket => {
        dialled.push('connect');
        throw new Error('the guard let a webhook reach connect()');
      },
    },
  });
  org = h.service.credentials.organizationId;
});
afterAll(() => h?.close());

const create = (url: string) =>
  post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/create_webhook_endpoint',
    envelope('ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', org, {
      url,
      name: 'ssrf',
      subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
    }),
  );

describe('webhook SSRF guard', () => {
  it.each([
    ['https://127.0.0.1/hook', /loopback/],
    ['https://[::1]/hook', /loopback/],
    ['https://localhost/hook', /loopback/],
    ['https://10.0.0.1/hook', /private/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['http://hooks.example.com/hook', /https/],
  ])('refuses %s at creation, naming parameters.url', async (url, why) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toMatch(/^parameters\.url: /);
    expect(String(res.json.message)).toMatch(why);
  });

  it('refuses the feature webhook to a loopback URL without the flag', async () => {
    const res = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/set_organization_feature',
      envelope('ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE', org, {
        name: 'FEATURE_NAME_WEBHOOK',
        value: 'http://127.0.0.1:9/hook',
      }),
    );
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toMatch(/^parameters\.value: /);
  });

  it('refuses at dial time a name that resolves to a private, metadata, loopback or ULA address, before any socket', async () => {
    const ids: string[] = [];
    for (const host of Object.keys(dns)) {
      const res = await create(`https://${host}/hook`);
      expect(res.status).toBe(200);
      ids.push((res.json.activity as any).result.createWebhookEndpointResult.endpointId);
    }
    const deliveries = async () =>
      (await h.service.store.listWebhookDeliveries(org, {}, { limit: 100 })).filter(
        (d) => d.endpointId !== null && ids.includes(d.endpointId),
      );
    // Each endpoint's own creation (and the ones after it) are its events.
    await waitFor(
      async () => {
        const list = await deliveries();
        return list.length > 0 && list.every((d) => d.state === 'FAILED');
      },
      10_000,
      'the refusals',
    );
    for (const d of await deliveries()) {
      expect(d.attempts).toBe(1);
      expect(d.lastError).toMatch(/^url: \S+\.hooks\.test points to a (private|link-local|loopback) address/);
      const [attempt] = await h.service.store.listWebhookAttempts(d.id);
      expect(attempt).toMatchObject({ outcome: 'FAILED', statusCode: null });
    }
    expect(dialled).toEqual([]);
  });
});
