/**
 * Record before signing: a body's activity is reserved (PENDING with a lease) before anything is
 * signed, and a reservation whose holder died does not block the body forever: a retry waits for
 * the lease to run out, takes the reservation over and signs once, under the reserved activity id.
 * Runs on either engine (COUNTERSIGN_TEST_STORE).
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { UUID_V7 } from './helpers/ids.js';
import type { ActivityRecord } from '../src/service/store/types.js';

const TYPE = 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2';
const PATH = '/public/v1/submit/sign_raw_payload';

let h: EmbeddedHarness;
let signWith: string;
beforeAll(async () => {
  h = await startEmbedded();
  signWith = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
    ?.address as string;
});
afterAll(async () => h?.close());

function body(tag: string): { raw: string; fingerprint: string } {
  const raw = envelope(TYPE, h.service.credentials.organizationId, {
    signWith,
    payload: keccak256(toHex(tag)),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  });
  return { raw, fingerprint: `sha256:${createHash('sha256').update(raw).digest('hex')}` };
}

/** A reservation of the body as a replica that then died would have left it. */
async function deadReservation(fingerprint: string, leaseUntilMs: number): Promise<ActivityRecord> {
  const now = Date.now();
  const r: ActivityRecord = {
    id: randomUUID(),
    organizationId: h.service.credentials.organizationId,
    type: TYPE,
    status: 'ACTIVITY_STATUS_PENDING',
    fingerprint,
    intentKey: 'signRawPayloadIntentV2',
    intentJson: '{}',
    resultKey: 'signRawPayloadResult',
    resultJson: null,
    failureJson: null,
    timestampMs: String(now),
    createdAtMs: now,
    updatedAtMs: now,
    appProofsJson: null,
  };
  expect(
    await h.service.store.write(async (tx) => tx.reserveActivity(r, [], 'a-dead-replica', leaseUntilMs)),
  ).toBe(true);
  return r;
}

describe('activity reservations', () => {
  it('records the activity before the answer and hides nothing once it completed', async () => {
    const b = body(`reserve ${randomUUID()}`);
    const res = await post(h.baseUrl, h.service.credentials, PATH, b.raw);
    expect(res.status).toBe(200);
    const lease = await h.service.store.getActivityLease(b.fingerprint);
    expect(lease?.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(lease?.leaseOwner).toBeNull();
    expect(await h.service.store.listVotes(lease?.activity.id as string)).toHaveLength(1);
  });

  it('gives the activity, its vote and its policy evaluation time-ordered ids (UUIDv7 of the activity time)', async () => {
    // A random id puts each row's primary-key entry on a leaf of its own; time-ordered ids append.
    const msOf = (id: string) => parseInt(id.replace('-', '').slice(0, 12), 16);
    const ids: string[][] = [];
    for (const tag of ['first', 'second']) {
      const b = body(`ordered ${tag} ${randomUUID()}`);
      expect((await post(h.baseUrl, h.service.credentials, PATH, b.raw)).status).toBe(200);
      const activity = (await h.service.store.getActivityLease(b.fingerprint))?.activity as ActivityRecord;
      const votes = await h.service.store.listVotes(activity.id);
      const evaluations = await h.service.store.listPolicyEvaluations(activity.id);
      expect(votes).toHaveLength(1);
      expect(evaluations).toHaveLength(1);
      const row = [activity.id, votes[0]?.id as string, evaluations[0]?.id as string];
      // One clock reading gives the activity its time and all three ids theirs.
      for (const id of row) {
        expect(id).toMatch(UUID_V7);
        expect(msOf(id)).toBe(activity.createdAtMs);
      }
      ids.push(row);
      await new Promise((r) => setTimeout(r, 2)); // the next activity in a later millisecond
    }
    for (let i = 0; i < 3; i++) expect((ids[0]?.[i] as string) < (ids[1]?.[i] as string)).toBe(true);
  });

  it('waits for a live reservation of another process, then takes it over once its lease ran out', async () => {
    const b = body(`takeover ${randomUUID()}`);
    const reserved = await deadReservation(b.fingerprint, Date.now() + 1_500);
    const started = Date.now();
    const res = await post(h.baseUrl, h.service.credentials, PATH, b.raw);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const a = res.json.activity as { id: string; status: string };
    // Not before the lease ran out: until then the other holder might still complete it.
    expect(Date.now()).toBeGreaterThanOrEqual(started + 1_000);
    expect(a).toMatchObject({ id: reserved.id, status: 'ACTIVITY_STATUS_COMPLETED' });
    const again = await post(h.baseUrl, h.service.credentials, PATH, b.raw);
    expect((again.json.activity as { id: string }).id).toBe(reserved.id);
    const stored = await h.service.store.getActivity(reserved.organizationId, reserved.id);
    expect(stored?.resultJson).toContain('"r"');
  });

  it('gives the reservation up when the activity fails before signing, so a retry runs afresh', async () => {
    const raw = envelope(TYPE, h.service.credentials.organizationId, {
      signWith: '0x000000000000000000000000000000000000dEaD',
      payload: keccak256(toHex('nobody signs this')),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const fp = `sha256:${createHash('sha256').update(raw).digest('hex')}`;
    const res = await post(h.baseUrl, h.service.credentials, PATH, raw);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await h.service.store.getActivityByFingerprint(fp)).toBeUndefined();
  });
});
