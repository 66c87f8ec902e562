/**
 * `npm run bench:webhooks`: webhook delivery on the embedded service (SQLite in a temp dir) to a
 * real receiver on 127.0.0.1, in one process (the receiver's own CPU is counted against us).
 *
 * 1. Deliveries per second: a backlog of activities is queued with one endpoint (one lane, strictly
 *    in order) and with four endpoints (four lanes side by side), then drained.
 * 2. Commit-to-receipt delay (p50/p99): sign_raw_payload's throughput is measured first; then
 *    activities are submitted at half that rate for BENCH_SECONDS, each with an endpoint subscribed,
 *    and the time from the submit call's return (after the commit) to the receiver's read is taken.
 *
 * Prints numbers only; nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { keccak256, toHex } from 'viem';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { openEmbeddedService, type EmbeddedService } from '../src/service/embedded.js';
import { envelope } from '../test/helpers/http.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test/helpers/webhook-receiver.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BACKLOG = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 2000);

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function submit(s: EmbeddedService, path: string, type: string, parameters: unknown): Promise<string> {
  const c = s.credentials;
  const body = envelope(type, c.organizationId, parameters);
  const stamp = await new ApiKeyStamper({
    apiPublicKey: c.apiPublicKey,
    apiPrivateKey: c.apiPrivateKey,
  }).stamp(body);
  const res = await s.handler({
    path: `/public/v1/submit/${path}`,
    headers: { [stamp.stampHeaderName.toLowerCase()]: stamp.stampHeaderValue },
    body: Buffer.from(body),
  });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(res.body).toString()}`);
  return (JSON.parse(Buffer.from(res.body).toString()) as { activity: { id: string } }).activity.id;
}

const addEndpoint = (s: EmbeddedService, url: string) =>
  submit(s, 'create_webhook_endpoint', 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', {
    url,
    name: url,
    subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
  });

let n = 0;
const tag = (s: EmbeddedService) =>
  submit(s, 'create_user_tag', 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: `bench ${n++}`, userIds: [] });

function signRaw(s: EmbeddedService): Promise<string> {
  const eth = s.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')!.address;
  return submit(s, 'sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
    signWith: eth,
    payload: keccak256(toHex(`bench ${n++} ${Math.random()}`)),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  });
}

async function withService<T>(fn: (s: EmbeddedService, r: WebhookReceiver) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-webhooks-'));
  const s = await openEmbeddedService({
    dataDir: dir,
    logger: pino({ level: 'silent' }),
    allowPrivateNetwork: true,
  });
  const r = await startWebhookReceiver();
  try {
    return await fn(s, r);
  } finally {
    await r.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function drain(lanes: number): Promise<void> {
  await withService(async (s, r) => {
    for (let i = 0; i < lanes; i++) await addEndpoint(s, `${r.url}/lane${i}`);
    const before = r.delivered().length;
    let left = BACKLOG;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (left-- > 0) await tag(s);
      }),
    );
    while ((await s.store.webhookBacklog(Date.now())).pending > 0)
      await new Promise((x) => setTimeout(x, 20));
    const got = r.delivered().slice(before);
    const seconds = ((got.at(-1)?.atMs ?? 0) - (got[0]?.atMs ?? 0)) / 1000;
    console.log(
      `deliveries, ${lanes} lane(s): ${got.length} between first and last receipt in ${seconds.toFixed(2)} s = ${(got.length / seconds).toFixed(0)}/s`,
    );
  });
}

async function delay(): Promise<void> {
  await withService(async (s, r) => {
    // Signing throughput, closed loop, 16 in flight, no endpoint.
    const until = Date.now() + SECONDS * 1000;
    let signed = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          await signRaw(s);
          signed++;
        }
      }),
    );
    const rate = signed / SECONDS;
    console.log(`sign_raw_payload throughput (no webhook): ${rate.toFixed(0)}/s`);
    await addEndpoint(s, `${r.url}/delay`);
    const committedAt = new Map<string, number>();
    const target = rate / 2;
    const interval = 1000 / target;
    const t0 = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; Date.now() - t0 < SECONDS * 1000; i++) {
      const due = t0 + i * interval;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((x) => setTimeout(x, wait));
      inflight.push(signRaw(s).then((id) => void committedAt.set(id, Date.now())));
    }
    await Promise.all(inflight);
    while ((await s.store.webhookBacklog(Date.now())).pending > 0)
      await new Promise((x) => setTimeout(x, 20));
    const delays: number[] = [];
    for (const got of r.delivered()) {
      const at = committedAt.get(JSON.parse(got.body).id as string);
      if (at !== undefined) delays.push(Math.max(0, got.atMs - at));
    }
    delays.sort((a, b) => a - b);
    console.log(
      `commit → receipt at ${target.toFixed(0)} activities/s (50% of signing): n=${delays.length} p50=${pct(delays, 50)} ms p99=${pct(delays, 99)} ms`,
    );
  });
}

await drain(1);
await drain(4);
await delay();
