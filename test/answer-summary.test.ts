/**
 * `X-Countersign-Answer: summary`: an activity's answer without the record the client sent (no
 * intent, votes or nested copy), which the gRPC daemon asks for. The summary's fields are the whole
 * answer's, for a new activity and for a retry of the same body; any other value of the header is
 * refused before anything is recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';

let h: EmbeddedHarness;
let org: string;
let signWith: string;

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  signWith = ethAddressOf(h);
});
afterAll(async () => {
  await h.close();
});

const SUMMARY = { 'x-countersign-answer': 'summary' };
const PATH = '/public/v1/submit/sign_raw_payload';
const body = (payload: string) =>
  envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', org, {
    signWith,
    payload,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  });
const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;

/** The summary a whole answer's activity makes: its fields, not a copy of the request. */
function summaryOf(full: Record<string, unknown>) {
  const a = full.activity as Record<string, unknown>;
  const { activity: _nested, ...result } = a.result as Record<string, unknown>;
  return {
    activity: {
      id: a.id,
      organizationId: a.organizationId,
      status: a.status,
      type: a.type,
      fingerprint: a.fingerprint,
      result,
      failure: a.failure,
    },
  };
}

describe('activity summaries', () => {
  it('answers a new activity and its retry with the whole answer’s fields and nothing else', async () => {
    const b = body('11'.repeat(32));
    const first = await post(h.baseUrl, h.service.credentials, PATH, b, { headers: SUMMARY });
    expect(first.status).toBe(200);
    // The same body again, without the header: the recorded activity's whole answer.
    const full = await post(h.baseUrl, h.service.credentials, PATH, b);
    expect(full.status).toBe(200);
    expect((full.json.activity as Record<string, unknown>).votes).toHaveLength(1);
    expect(first.json).toEqual(summaryOf(full.json));
    expect((first.json.activity as Record<string, unknown>).status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(JSON.stringify(first.json)).toMatch(/"signRawPayloadResult":\{"r":"[0-9a-f]{64}"/);
    // A retry asking for the summary gets it from the record.
    const again = await post(h.baseUrl, h.service.credentials, PATH, b, { headers: SUMMARY });
    expect(again.json).toEqual(first.json);
  });

  it('is what the daemon’s client asks for, and parses to the same activity', async () => {
    const c = h.service.credentials;
    const client = (summaries: boolean) =>
      new PublicApiClient({
        organizationId: org,
        stamper: new ApiKeyStamper(c),
        transport: { send: (req) => h.service.handler(req), close: async () => {} },
        summaries,
      });
    const b = new TextEncoder().encode(body('22'.repeat(32)));
    const summarized = await client(true).submit('sign_raw_payload', b);
    const whole = await client(false).submit('sign_raw_payload', b);
    // The whole answer's result also holds the seed's nested copy of the activity; nothing else differs.
    const { activity: nested, ...result } = whole.result;
    expect(nested).toMatchObject({ id: whole.id });
    expect(summarized).toEqual({ ...whole, result });
    expect(summarized.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('refuses any other value of the header, naming it, with nothing recorded', async () => {
    const before = await activityCount();
    const r = await post(h.baseUrl, h.service.credentials, PATH, body('33'.repeat(32)), {
      headers: { 'x-countersign-answer': 'full' },
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toContain('X-Countersign-Answer');
    expect(await activityCount()).toBe(before);
  });
});
