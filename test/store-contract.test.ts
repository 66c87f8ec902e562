/**
 * The store contract, run unchanged over both engines: what a write commits, what a failing write
 * leaves (nothing), the guarantees the database enforces (one activity per fingerprint, one
 * completion per activity, consecutive nonces under concurrency), reads and their filters. On
 * PostgreSQL the concurrency cases run across two store instances on one database: two replicas.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/service/store/postgres.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import type { ActivityRecord, Store } from '../src/service/store/types.js';
import { createTestDatabase, type TestDatabase } from './helpers/pgdb.js';

interface Engine {
  readonly name: string;
  /** Two handles on one database: the same store twice (SQLite) or two replicas (PostgreSQL). */
  open(): Promise<[Store, Store]>;
  cleanup(): Promise<void>;
}

const sqlite = (): Engine => {
  const dir = mkdtempSync(join(tmpdir(), 'cs-store-'));
  let store: Store | undefined;
  return {
    name: 'sqlite',
    open: async () => {
      store = openSqliteStore(join(dir, 'countersign.db'));
      return [store, store];
    },
    cleanup: async () => {
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const postgres = (): Engine => {
  let db: TestDatabase | undefined;
  const stores: Store[] = [];
  return {
    name: 'postgres',
    open: async () => {
      db = await createTestDatabase('cs_contract');
      // Opened at once: the migrations run under an advisory lock, once.
      const [a, b] = await Promise.all([openPostgresStore(db.url), openPostgresStore(db.url)]);
      stores.push(a, b);
      return [a, b];
    },
    cleanup: async () => {
      for (const s of stores) await s.close();
      await db?.drop();
    },
  };
};

const NOW = 1_700_000_000_000;

const activity = (org: string, over: Partial<ActivityRecord> = {}): ActivityRecord => ({
  id: randomUUID(),
  organizationId: org,
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
  status: 'ACTIVITY_STATUS_PENDING',
  fingerprint: `sha256:${randomUUID()}`,
  intentKey: 'signRawPayloadIntentV2',
  intentJson: '{}',
  resultKey: 'signRawPayloadResult',
  resultJson: null,
  failureJson: null,
  timestampMs: String(NOW),
  createdAtMs: NOW,
  updatedAtMs: NOW,
  ...over,
});

describe.each([
  { name: 'SQLite', make: sqlite },
  { name: 'PostgreSQL', make: postgres },
])('store contract on $name', ({ make }) => {
  const engine = make();
  let a: Store;
  let b: Store;
  const org = randomUUID();
  const user = randomUUID();

  beforeAll(async () => {
    [a, b] = await engine.open();
    await a.write(async (tx) => {
      await tx.insertOrganization({
        id: org,
        name: 'Org',
        parentId: null,
        rootQuorumThreshold: 1,
        createdAtMs: NOW,
      });
      await tx.insertUser({
        id: user,
        organizationId: org,
        name: 'root',
        email: 'root@example.com',
        phoneNumber: null,
        isRoot: true,
        createdAtMs: NOW,
        updatedAtMs: NOW,
      });
    });
  }, 60_000);
  afterAll(async () => engine.cleanup(), 60_000);

  it('reads back what a write committed, from either handle', async () => {
    const key = {
      id: randomUUID(),
      userId: user,
      organizationId: org,
      name: 'k',
      publicKey: `02${'ab'.repeat(32)}`,
      curve: 'API_KEY_CURVE_P256' as const,
      expiresAtMs: null,
      createdAtMs: NOW,
    };
    await a.write(async (tx) => tx.insertApiKey(key));
    expect(await b.findApiKeys(key.publicKey, [org])).toEqual([key]);
    expect(await b.findApiKeys(key.publicKey, [randomUUID()])).toEqual([]);
    expect((await b.getOrganization(org))?.name).toBe('Org');
    expect((await b.getUser(user))?.isRoot).toBe(true);
  });

  it('leaves nothing of a write that throws, and answers the error', async () => {
    const r = activity(org);
    await expect(
      a.write(async (tx) => {
        await tx.insertActivity(r, []);
        throw new Error('refused halfway');
      }),
    ).rejects.toThrow('refused halfway');
    expect(await b.getActivity(org, r.id)).toBeUndefined();
  });

  it('keeps one activity per fingerprint, even when both handles insert it at once', async () => {
    const fingerprint = `sha256:${randomUUID()}`;
    const tries = [a, b, a, b].map((s) =>
      s.write(async (tx) => tx.insertActivity(activity(org, { fingerprint }), [])),
    );
    const settled = await Promise.allSettled(tries);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    expect((await b.getActivityByFingerprint(fingerprint))?.fingerprint).toBe(fingerprint);
  });

  it('completes an activity once: of two concurrent completions only one takes effect', async () => {
    const r = activity(org);
    await a.write(async (tx) => tx.insertActivity(r, []));
    const complete = (s: Store, result: string) =>
      s.write(async (tx) =>
        tx.updateActivity(r.id, 'ACTIVITY_STATUS_PENDING', {
          status: 'ACTIVITY_STATUS_COMPLETED',
          resultJson: result,
          failureJson: null,
          updatedAtMs: NOW + 1,
        }),
      );
    const [x, y] = await Promise.all([complete(a, '{"by":"a"}'), complete(b, '{"by":"b"}')]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    const stored = await a.getActivity(org, r.id);
    expect(stored?.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(stored?.resultJson).toBe(x ? '{"by":"a"}' : '{"by":"b"}');
  });

  it('hands out consecutive nonces, never one twice, to concurrent allocations on both handles', async () => {
    const caip2 = 'eip155:31337';
    const address = `0x${randomUUID().replace(/-/g, '').padEnd(40, '0')}`;
    const got = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).write(async (tx) => tx.allocateNonce(caip2, address, 0n, undefined)),
      ),
    );
    expect([...got].sort((x, y) => Number(x - y))).toEqual(Array.from({ length: 40 }, (_, i) => BigInt(i)));
    expect(await a.getNextNonce(caip2, address)).toBe(40n);
  });

  it('lists activities newest first, filtered by status and type, with a cursor', async () => {
    const other = randomUUID();
    await a.write(async (tx) =>
      tx.insertOrganization({
        id: other,
        name: 'Other',
        parentId: null,
        rootQuorumThreshold: 1,
        createdAtMs: NOW,
      }),
    );
    const rs = [
      activity(other, { id: '00000000-0000-4000-8000-000000000001', status: 'ACTIVITY_STATUS_COMPLETED' }),
      activity(other, { id: '00000000-0000-4000-8000-000000000002', status: 'ACTIVITY_STATUS_FAILED' }),
      activity(other, {
        id: '00000000-0000-4000-8000-000000000003',
        status: 'ACTIVITY_STATUS_COMPLETED',
        type: 'ACTIVITY_TYPE_CREATE_WALLET',
      }),
    ];
    await a.write(async (tx) => {
      for (const r of rs) await tx.insertActivity(r, []);
    });
    const ids = (list: ActivityRecord[]) => list.map((r) => r.id.slice(-1));
    expect(ids(await b.listActivities(other, { limit: 10 }))).toEqual(['3', '2', '1']);
    expect(
      ids(await b.listActivities(other, { limit: 10 }, { statuses: ['ACTIVITY_STATUS_COMPLETED'] })),
    ).toEqual(['3', '1']);
    expect(
      ids(await b.listActivities(other, { limit: 10 }, { types: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'] })),
    ).toEqual(['2', '1']);
    expect(ids(await b.listActivities(other, { limit: 1, before: rs[2]?.id }))).toEqual(['2']);
  });

  it('stores blobs and large integers as they were given', async () => {
    const sealed = new Uint8Array([0, 1, 2, 253, 254, 255]);
    const id = randomUUID();
    const stored = await a.write(async (tx) =>
      tx.insertServiceKeyIfAbsent({ id, publicKey: '04ab', sealedKey: sealed, createdAtMs: 2 ** 50 }),
    );
    expect(stored.sealedKey).toEqual(sealed);
    const read = await b.getServiceKey(id);
    expect(read?.sealedKey).toEqual(sealed);
    expect(read?.createdAtMs).toBe(2 ** 50);
  });

  // --- replicas ---
  it('reserves a fingerprint once: of concurrent reservations on both handles one wins, with its lease', async () => {
    const fingerprint = `sha256:${randomUUID()}`;
    const owners = ['r1', 'r2', 'r3', 'r4'];
    const won = await Promise.all(
      owners.map((owner, i) =>
        (i % 2 === 0 ? a : b).write(async (tx) =>
          tx.reserveActivity(activity(org, { fingerprint }), [], owner, NOW + 30_000),
        ),
      ),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = owners[won.indexOf(true)];
    const lease = await b.getActivityLease(fingerprint);
    expect(lease?.leaseOwner).toBe(winner);
    expect(lease?.leaseExpiresAtMs).toBe(NOW + 30_000);
    expect(lease?.activity.status).toBe('ACTIVITY_STATUS_PENDING');
  });

  it('a reservation written with durable: false is visible to the other handle once its write resolves, and one fingerprint still wins once', async () => {
    const fingerprint = `sha256:${randomUUID()}`;
    const won = await Promise.all(
      ['r1', 'r2'].map((owner, i) =>
        (i === 0 ? a : b).write(
          async (tx) => tx.reserveActivity(activity(org, { fingerprint }), [], owner, NOW + 30_000),
          { durable: false },
        ),
      ),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await b.getActivityLease(fingerprint))?.activity.status).toBe('ACTIVITY_STATUS_PENDING');
    expect((await a.getActivityLease(fingerprint))?.leaseOwner).toBe(won[0] ? 'r1' : 'r2');
    // synced() settles once what was committed is durable, on both engines.
    await Promise.all([a.synced(), b.synced()]);
  });

  it('lets another owner take a lease only once it expired; completing the activity ends it', async () => {
    const r = activity(org);
    await a.write(async (tx) => tx.reserveActivity(r, [], 'r1', NOW + 1_000));
    const take = (s: Store, owner: string, at: number) =>
      s.write(async (tx) => tx.leaseActivity(r.id, 'ACTIVITY_STATUS_PENDING', owner, at, at + 1_000));
    expect(await take(b, 'r2', NOW + 500)).toBe(false);
    expect(await take(a, 'r1', NOW + 500)).toBe(true);
    // Expired: of two takers at once, one gets it.
    const both = await Promise.all([take(a, 'r2', NOW + 5_000), take(b, 'r3', NOW + 5_000)]);
    expect(both.filter(Boolean)).toHaveLength(1);
    const holder = both[0] ? 'r2' : 'r3';
    expect((await a.write(async (tx) => tx.lockActivity(r.id)))?.leaseOwner).toBe(holder);
    await b.write(async (tx) =>
      tx.updateActivity(r.id, 'ACTIVITY_STATUS_PENDING', {
        status: 'ACTIVITY_STATUS_COMPLETED',
        resultJson: '{}',
        failureJson: null,
        updatedAtMs: NOW + 6_000,
      }),
    );
    const done = await a.getActivityLease(r.fingerprint);
    expect(done?.leaseOwner).toBeNull();
    expect(await take(a, 'r1', NOW + 9_000)).toBe(false);
  });

  it('completes a reservation only for its lease holder, in one statement that ends the lease', async () => {
    const r = activity(org);
    await a.write(async (tx) => tx.reserveActivity(r, [], 'r1', NOW + 1_000));
    const complete = (s: Store, owner: string) =>
      s.write(async (tx) =>
        tx.completeLeasedActivity(r.id, owner, {
          status: 'ACTIVITY_STATUS_COMPLETED',
          resultJson: '{"done":true}',
          failureJson: null,
          updatedAtMs: NOW + 500,
          appProofsJson: '[]',
        }),
      );
    expect(await complete(b, 'r2')).toBe(false);
    expect((await a.getActivityLease(r.fingerprint))?.activity.status).toBe('ACTIVITY_STATUS_PENDING');
    // Of two completions by the holder at once (one per handle), one takes effect.
    const both = await Promise.all([complete(a, 'r1'), complete(b, 'r1')]);
    expect(both.filter(Boolean)).toHaveLength(1);
    const done = await b.getActivityLease(r.fingerprint);
    expect(done?.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done?.activity.resultJson).toBe('{"done":true}');
    expect(done?.activity.appProofsJson).toBe('[]');
    expect(done?.leaseOwner).toBeNull();
    expect(done?.leaseExpiresAtMs).toBeNull();
    expect(await complete(a, 'r1')).toBe(false);
  });

  it('abandons a reservation only for its lease holder, removing its votes', async () => {
    const r = activity(org);
    const vote = {
      id: randomUUID(),
      activityId: r.id,
      userId: user,
      selection: 'VOTE_SELECTION_APPROVED' as const,
      message: '{}',
      publicKey: '02ab',
      signature: 'sig',
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      createdAtMs: NOW,
    };
    await a.write(async (tx) => tx.reserveActivity(r, [vote], 'r1', NOW + 1_000));
    expect(await b.write(async (tx) => tx.abandonActivity(r.id, 'r2'))).toBe(false);
    expect(await b.listVotes(r.id)).toHaveLength(1);
    expect(await b.write(async (tx) => tx.abandonActivity(r.id, 'r1'))).toBe(true);
    expect(await a.getActivityByFingerprint(r.fingerprint)).toBeUndefined();
    expect(await a.listVotes(r.id)).toEqual([]);
  });

  it('counts one vote per voter: a second vote of one user on an activity is refused', async () => {
    const r = activity(org, { status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED' });
    await a.write(async (tx) => tx.insertActivity(r, []));
    const vote = (s: Store) =>
      s.write(async (tx) =>
        tx.insertVote({
          id: randomUUID(),
          activityId: r.id,
          userId: user,
          selection: 'VOTE_SELECTION_APPROVED',
          message: '{}',
          publicKey: '02ab',
          signature: 'sig',
          scheme: 'SIGNATURE_SCHEME_TK_API_P256',
          createdAtMs: NOW,
        }),
      );
    const settled = await Promise.allSettled([vote(a), vote(b)]);
    expect(settled.filter((x) => x.status === 'fulfilled')).toHaveLength(1);
    expect(await a.listVotes(r.id)).toHaveLength(1);
  });
  // --- end replicas ---
});
