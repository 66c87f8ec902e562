import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allowPolicy } from '../../../test/helpers/records.js';
import { serviceMetrics } from '../../observability/metrics.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './types.js';

const NOW = 1_700_000_000_000;

const policy = (org: string, name: string) => allowPolicy(org, name, NOW);

/** fdatasync calls of the WAL so far, in this thread (the store's histogram counts each one). */
async function fsyncs(): Promise<number> {
  const h = await serviceMetrics().fsyncSeconds.get();
  return h.values.find((v) => v.metricName === 'countersign_store_fsync_duration_seconds_count')?.value ?? 0;
}

/** A new organization in `store`; its id. */
async function insertOrganization(store: Store): Promise<string> {
  const id = randomUUID();
  await store.write(async (tx) => {
    await tx.insertOrganization({ id, name: 'o', parentId: null, rootQuorumThreshold: 1, createdAtMs: NOW });
  });
  return id;
}

const restores: (() => void)[] = [];

/** Counts from now on the statements matching `pattern` that run (better-sqlite3's Statement#run). */
function statementsRun(pattern: RegExp): () => number {
  const probe = new Database(':memory:');
  type Run = (this: { source: string }, ...args: unknown[]) => unknown;
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as { run: Run };
  probe.close();
  const original = proto.run;
  let n = 0;
  proto.run = function (...args) {
    if (pattern.test(this.source)) n++;
    return original.apply(this, args);
  };
  restores.push(() => {
    proto.run = original;
  });
  return () => n;
}

describe('SQLite durability off the JavaScript thread', () => {
  let dir: string;
  let store: Store;
  let org: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-sync-'));
    store = openSqliteStore(join(dir, 'service.db'));
    org = await insertOrganization(store);
  });
  afterEach(async () => {
    for (const restore of restores.splice(0)) restore();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits with synchronous=NORMAL and syncs the WAL itself: a durable write resolves after an fdatasync that began after its commit', async () => {
    const before = await fsyncs();
    let fsyncsAtCommit = -1;
    const id = await store.write(async (tx) => {
      await tx.insertPolicy(policy(org, 'p1'));
      fsyncsAtCommit = await fsyncs();
      return 'done';
    });
    expect(id).toBe('done');
    expect(fsyncsAtCommit).toBe(before);
    expect(await fsyncs()).toBeGreaterThan(before);
    // Another connection sees the row.
    const other = new Database(join(dir, 'service.db'), { readonly: true });
    try {
      expect(other.prepare('SELECT COUNT(*) AS n FROM policies WHERE name = ?').get('p1')).toEqual({ n: 1 });
    } finally {
      other.close();
    }
  });

  it('a write with durable: false resolves at its commit, visible to other connections; synced() then syncs it', async () => {
    await store.synced();
    const before = await fsyncs();
    await store.write(async (tx) => await tx.insertPolicy(policy(org, 'reserved')), { durable: false });
    expect(await fsyncs()).toBe(before);
    const other = new Database(join(dir, 'service.db'), { readonly: true });
    try {
      expect(other.prepare('SELECT COUNT(*) AS n FROM policies WHERE name = ?').get('reserved')).toEqual({
        n: 1,
      });
    } finally {
      other.close();
    }
    await store.synced();
    expect(await fsyncs()).toBe(before + 1);
    // Nothing committed since: synced() needs no further fdatasync.
    await store.synced();
    expect(await fsyncs()).toBe(before + 1);
  });

  it('one fdatasync covers the commits made while the previous one ran (group commit without blocking the thread)', async () => {
    await store.synced();
    const before = await fsyncs();
    const n = 200;
    const writes: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      writes.push(store.write(async (tx) => await tx.insertPolicy(policy(org, `g${i}`))));
      // Spread the writes over several turns of the event loop, so they land in separate batches.
      if (i % 10 === 9) await new Promise<void>((r) => setImmediate(r));
    }
    await Promise.all(writes);
    const used = (await fsyncs()) - before;
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThan(n);
    expect((await store.listPolicies(org)).length).toBe(n);
  });

  it('a failing write in a batch leaves nothing and is refused, while its neighbour in the batch commits', async () => {
    await store.synced();
    const bad = store.write(async (tx) => {
      await tx.insertPolicy(policy(org, 'half'));
      throw new Error('refused');
    });
    const good = store.write(async (tx) => await tx.insertPolicy(policy(org, 'kept')));
    await expect(bad).rejects.toThrow('refused');
    await good;
    const names = (await store.listPolicies(org)).map((p) => p.name);
    expect(names).toContain('kept');
    expect(names).not.toContain('half');
  });

  it('rerunnable writes share a batch without savepoints: each runs once and commits', async () => {
    await store.synced();
    const runs = new Map<string, number>();
    const write = (name: string) =>
      store.write(
        async (tx) => {
          runs.set(name, (runs.get(name) ?? 0) + 1);
          await tx.insertPolicy(policy(org, name));
          return name;
        },
        { rerunnable: true },
      );
    const savepoints = statementsRun(/^(SAVEPOINT|RELEASE)/);
    expect(await Promise.all([write('a'), write('b'), write('c')])).toEqual(['a', 'b', 'c']);
    expect([...runs.values()]).toEqual([1, 1, 1]);
    expect(savepoints()).toBe(0);
    expect((await store.listPolicies(org)).map((p) => p.name).sort()).toEqual(['a', 'b', 'c']);
  });

  it('a rerunnable write that fails: the batch runs again isolated, the others commit once, it leaves nothing', async () => {
    await store.synced();
    const runs = new Map<string, number>();
    const write = (name: string, fail = false) =>
      store.write(
        async (tx) => {
          runs.set(name, (runs.get(name) ?? 0) + 1);
          await tx.insertPolicy(policy(org, name));
          if (fail) throw new Error(`refused ${name}`);
          return name;
        },
        { rerunnable: true },
      );
    const first = write('first');
    const bad = write('half', true);
    const last = write('last');
    await expect(bad).rejects.toThrow('refused half');
    expect(await first).toBe('first');
    expect(await last).toBe('last');
    // The write before the failure ran bare, then again isolated; the one after it only isolated.
    expect(Object.fromEntries(runs)).toEqual({ first: 2, half: 2, last: 1 });
    const names = (await store.listPolicies(org)).map((p) => p.name).sort();
    expect(names).toEqual(['first', 'last']);
  });

  it('a batch with one write that is not rerunnable keeps a savepoint apiece', async () => {
    await store.synced();
    const savepoints = statementsRun(/^SAVEPOINT/);
    await Promise.all([
      store.write(async (tx) => await tx.insertPolicy(policy(org, 'a')), { rerunnable: true }),
      store.write(async (tx) => await tx.insertPolicy(policy(org, 'b'))),
    ]);
    expect(savepoints()).toBe(2);
  });

  it('a read made while a batch is open does not see its rows; once it commits, a read does', async () => {
    let during: unknown[] = ['not read'];
    await store.write(async (tx) => {
      await tx.insertPolicy(policy(org, 'p1'));
      during = await store.listPolicies(org);
    });
    expect(during).toEqual([]);
    expect((await store.listPolicies(org)).map((p) => p.name)).toEqual(['p1']);
  });

  it('a batch that rolls a write back leaves nothing a later read (on the writer) could see', async () => {
    await store
      .write(async (tx) => {
        await tx.insertPolicy(policy(org, 'gone'));
        throw new Error('refused');
      })
      .catch(() => undefined);
    expect(await store.listPolicies(org)).toEqual([]);
  });
});

describe('a write that finds the write lock taken (the checkpointer restarting the WAL, another process)', () => {
  let dir: string;
  let path: string;
  let other: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-busy-'));
    path = join(dir, 'service.db');
  });
  afterEach(() => {
    if (other?.open) other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another connection to the store's file that holds the write lock until `release()`. */
  function holdWriteLock(): () => void {
    other = new Database(path);
    other.prepare('BEGIN IMMEDIATE').run();
    return () => other.prepare('COMMIT').run();
  }

  it('waits without holding the thread, and commits once the lock is free', async () => {
    const store = openSqliteStore(path);
    try {
      const org = await insertOrganization(store);
      const release = holdWriteLock();
      // The lock is released from a timer on this same thread: a write whose BEGIN slept in
      // SQLite's busy handler would hold the thread until its busy timeout ran out, and fail.
      const events: string[] = [];
      setTimeout(() => {
        events.push('released');
        release();
      }, 50);
      await store.write(async (tx) => await tx.insertPolicy(policy(org, 'after')));
      events.push('written');
      expect(events).toEqual(['released', 'written']);
      expect((await store.listPolicies(org)).map((p) => p.name)).toEqual(['after']);
    } finally {
      await store.close();
    }
  });

  it('fails with SQLITE_BUSY once busyTimeoutMs has passed, leaving nothing written; the next write goes through', async () => {
    const store = openSqliteStore(path, { busyTimeoutMs: 100 });
    try {
      const org = await insertOrganization(store);
      const release = holdWriteLock();
      await expect(
        store.write(async (tx) => await tx.insertPolicy(policy(org, 'refused'))),
      ).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
      release();
      await store.write(async (tx) => await tx.insertPolicy(policy(org, 'kept')));
      expect((await store.listPolicies(org)).map((p) => p.name)).toEqual(['kept']);
    } finally {
      await store.close();
    }
  });
});

describe('the WAL under a steady stream of commits', () => {
  it('is started over once it passes walRestartBytes, so it does not grow with the load', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-wal-'));
    const path = join(dir, 'service.db');
    const restartBytes = 256 * 1024;
    const store = openSqliteStore(path, { walRestartBytes: restartBytes, checkpointIntervalMs: 20 });
    try {
      const org = await insertOrganization(store);
      // Eight writers, each committing policies with 32 KiB of notes back to back, until 64 MiB of
      // notes went through the WAL; the file's largest size on the way is what counts.
      const notes = 'n'.repeat(32 * 1024);
      let written = 0;
      let largest = 0;
      const writer = async () => {
        while (written < 64 * 1024 * 1024) {
          await store.write(async (tx) => {
            await tx.insertPolicy({ ...policy(org, randomUUID()), notes });
          });
          written += notes.length;
          largest = Math.max(largest, statSync(`${path}-wal`).size);
        }
      };
      await Promise.all(Array.from({ length: 8 }, writer));
      expect(written).toBeGreaterThanOrEqual(64 * 1024 * 1024);
      // Without the restarts the WAL holds every page written (87 MB here); with them it stays a
      // fraction of that (12 MB here: the restart waits for a gap between the writer's commits).
      expect(largest).toBeLessThan(written / 2);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
