import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { busyRetrier, startWalCheckpointer, type WalCheckpointer } from './walCheckpointer.js';

/** Resolves once `done()` holds; a guard of 20 s against a hang, not a speed check. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `n` rows of 4,000 bytes (a page each) in one commit. */
const insertPages = (db: Database.Database, n: number) =>
  db
    .prepare(
      'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) INSERT INTO t SELECT randomblob(4000) FROM s',
    )
    .run(n);

describe('the WAL checkpointed on a thread of its own', () => {
  let dir: string;
  let path: string;
  let db: Database.Database;
  let checkpointer: WalCheckpointer | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-ckpt-'));
    path = join(dir, 'x.db');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v BLOB)');
  });
  afterEach(async () => {
    await checkpointer?.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('turns the connection’s own checkpoints off, and the thread copies the WAL into the database file', async () => {
    // A thread that does not checkpoint within the test, so that only the connection could have.
    checkpointer = startWalCheckpointer(db, path, { intervalMs: 3_600_000 });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // 8 MiB in one commit: 2,000 pages in the WAL, twice what SQLite checkpoints at by default.
    const before = statSync(path).size;
    insertPages(db, 2000);
    expect(statSync(path).size).toBe(before);
    await checkpointer?.stop();
    checkpointer = startWalCheckpointer(db, path, { intervalMs: 10 });
    await until(() => statSync(path).size > 8_000_000);
  });

  it('starts the WAL over once it passes restartBytes, and it is cut back to twice that size', async () => {
    const restartBytes = 256 * 1024;
    checkpointer = startWalCheckpointer(db, path, { intervalMs: 10, restartBytes });
    insertPages(db, 2000);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(8_000_000);
    await until(() => statSync(`${path}-wal`).size <= 2 * restartBytes);
    // Later commits write from the WAL's start: the file does not grow again.
    for (let i = 0; i < 20; i++) db.prepare('INSERT INTO t VALUES (randomblob(100))').run();
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(2 * restartBytes);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2020);
  });

  it('makes the commit that starts the WAL over itself, writing nothing the database holds', async () => {
    db.pragma('application_id = 1129534035');
    // The WAL header's checkpoint sequence number moves each time the WAL is started over.
    const sequence = () => {
      const header = Buffer.alloc(16);
      const fd = openSync(`${path}-wal`, 'r');
      try {
        readSync(fd, header, 0, 16, 0);
      } finally {
        closeSync(fd);
      }
      return header.readUInt32BE(12);
    };
    const before = sequence();
    checkpointer = startWalCheckpointer(db, path, { intervalMs: 10, restartBytes: 256 * 1024 });
    insertPages(db, 2000);
    // No commit of this connection follows: the thread's own starts the WAL over and truncates it.
    await until(() => sequence() !== before && statSync(`${path}-wal`).size <= 512 * 1024);
    expect(db.pragma('application_id', { simple: true })).toBe(1129534035);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2000);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  });

  it('gives the connection its own checkpoints back if the thread fails', async () => {
    // The thread cannot open a file that is not there.
    checkpointer = startWalCheckpointer(db, join(dir, 'missing', 'x.db'));
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await until(() => db.pragma('wal_autocheckpoint', { simple: true }) === 1000);
    await checkpointer?.stop();
    await checkpointer?.stop(); // twice is harmless
  });

  it('has nothing to do for an in-memory database', () => {
    const memory = new Database(':memory:');
    try {
      expect(startWalCheckpointer(memory, ':memory:')).toBeUndefined();
      expect(memory.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    } finally {
      memory.close();
    }
  });
});

describe('a statement that finds a lock taken', () => {
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

  it('runs at once when nothing is locked: the value itself, no promise', () => {
    expect(busyRetrier(5000)(() => 42)).toBe(42);
  });

  it('runs again after a timer while the thread goes on, until it goes through', async () => {
    let tries = 0;
    const events: string[] = [];
    const result = busyRetrier(5000)(() => {
      tries++;
      if (tries < 3) throw busy();
      events.push('ran');
      return 'done';
    });
    expect(result).toBeInstanceOf(Promise);
    events.push('thread free');
    expect(await result).toBe('done');
    expect(tries).toBe(3);
    expect(events).toEqual(['thread free', 'ran']);
  });

  it('fails with SQLITE_BUSY once the budget has passed, and at once on any other error', async () => {
    await expect(
      busyRetrier(30)(() => {
        throw busy();
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(() =>
      busyRetrier(5000)(() => {
        throw Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT' });
      }),
    ).toThrow('constraint');
  });
});
