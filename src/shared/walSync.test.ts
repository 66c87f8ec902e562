import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WalSync } from './walSync.js';

describe('WalSync', () => {
  let dir: string;
  let db: Database.Database;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-walsync-'));
    path = join(dir, 'a.db');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v INTEGER)');
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('syncs once at the first wait (an earlier process may have left commits unsynced), then only after new commits', async () => {
    const syncs: bigint[] = [];
    const sync = new WalSync(path, (began) => syncs.push(began));
    await sync.durable();
    expect(syncs).toHaveLength(1);
    await sync.durable();
    expect(syncs).toHaveLength(1);
    db.prepare('INSERT INTO t VALUES (1)').run();
    sync.committed();
    await sync.durable();
    expect(syncs).toHaveLength(2);
    sync.close();
  });

  it('lets commits made while an fdatasync runs share the next one, and waiters covered by the running one wait for it alone', async () => {
    const syncs: bigint[] = [];
    const sync = new WalSync(path, (began) => syncs.push(began));
    await sync.durable();
    syncs.length = 0;
    db.prepare('INSERT INTO t VALUES (1)').run();
    sync.committed();
    const first = sync.durable(); // starts an fdatasync
    const coveredByFirst = sync.durable(); // nothing committed since it began
    const later: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      db.prepare('INSERT INTO t VALUES (?)').run(i);
      sync.committed();
      later.push(sync.durable());
    }
    await Promise.all([first, coveredByFirst, ...later]);
    // The first fdatasync, then one for the twenty commits made while it ran.
    expect(syncs).toHaveLength(2);
    sync.close();
  });

  it('keeps its descriptor until a running fdatasync returns when closed, and refuses later waits', async () => {
    const sync = new WalSync(path);
    db.prepare('INSERT INTO t VALUES (1)').run();
    sync.committed();
    const running = sync.durable();
    sync.close();
    await expect(running).resolves.toBeUndefined();
    sync.committed();
    await expect(sync.durable()).rejects.toThrow('the database is closed');
  });

  it('has nothing to sync for an in-memory database', async () => {
    const sync = new WalSync(':memory:');
    expect(sync.enabled).toBe(false);
    sync.committed();
    await expect(sync.durable()).resolves.toBeUndefined();
    sync.close();
  });
});
