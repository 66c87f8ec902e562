/**
 * Webhooks survive `kill -9` (issue 14): with deliveries due and in flight, the server is killed;
 * after a restart every committed activity's event reaches the receiver (at least once, always under
 * the same event id), and no event exists for an activity that was never committed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../src/service/embedded.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import { envelope, post } from './helpers/http.js';
import { startServe } from './helpers/serve.js';
import { startWebhookReceiver, waitFor, type WebhookReceiver } from './helpers/webhook-receiver.js';

const dirs: string[] = [];
let receiver: WebhookReceiver | undefined;
afterAll(async () => {
  await receiver?.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

describe('webhook durability', () => {
  it('delivers every committed event after kill -9, under the same event id, and none for what was not committed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-webhooks-'));
    dirs.push(dataDir);
    // At first the receiver never answers: deliveries are in flight when the server dies.
    receiver = await startWebhookReceiver(() => ({ hang: true }));
    const flags = ['--data-dir', dataDir, '--allow-private-network'];
    const first = await startServe(flags);
    const api = first.ready.api as string;
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const org = creds.organizationId;
    const submit = (path: string, type: string, parameters: unknown) =>
      post(api, creds, `/public/v1/submit/${path}`, envelope(type, org, parameters));
    const hook = await submit('create_webhook_endpoint', 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', {
      url: `${receiver.url}/durable`,
      name: 'durable',
      subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
    });
    expect(hook.status).toBe(200);
    const tag = (i: number) =>
      submit('create_user_tag', 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: `d${i}`, userIds: [] });
    const acked = await Promise.all(Array.from({ length: 60 }, (_, i) => tag(i)));
    expect(acked.every((r) => r.status === 200)).toBe(true);
    await waitFor(() => receiver!.received.length > 0, 20_000, 'a delivery in flight');
    // More requests race the kill: some may commit, some not.
    const racing = Array.from({ length: 40 }, (_, i) => tag(100 + i).catch(() => undefined));
    await new Promise((r) => setTimeout(r, 5));
    first.proc.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await Promise.all(racing);

    receiver.setAnswer(() => ({}));
    const second = await startServe(flags);
    const ackedIds = [hook, ...acked].map((r) => (r.json.activity as { id: string }).id);
    const deliveredIds = () => new Set(receiver!.delivered().map((r) => JSON.parse(r.body).id as string));
    await waitFor(() => ackedIds.every((id) => deliveredIds().has(id)), 60_000, 'every acknowledged event');
    // Let the restarted dispatcher finish whatever else it holds, then stop it cleanly.
    await new Promise((r) => setTimeout(r, 1_000));
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const store = openSqliteStore(join(dataDir, 'countersign.db'), { backgroundCheckpoint: false });
    try {
      const committed = (await store.listActivities(org, { limit: 1_000 })).filter(
        (a) =>
          a.type === 'ACTIVITY_TYPE_CREATE_USER_TAG' || a.type === 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
      );
      const committedIds = new Set(committed.map((a) => a.id));
      // Every committed activity was delivered; nothing delivered that was not committed.
      expect(deliveredIds()).toEqual(committedIds);
      for (const r of receiver.received) expect(committedIds.has(JSON.parse(r.body).id)).toBe(true);
      // At least once, always the same event id for the same activity.
      const eventOf = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const id = JSON.parse(r.body).id as string;
        eventOf.set(id, (eventOf.get(id) ?? new Set()).add(String(r.headers['x-turnkey-event-id'])));
      }
      expect([...eventOf.values()].every((s) => s.size === 1)).toBe(true);
      expect((await store.webhookBacklog(Date.now())).pending).toBe(0);
    } finally {
      await store.close();
    }
  }, 120_000);
});
