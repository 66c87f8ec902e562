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

  it('syncs on the calling thread when asked to and none runs on the pool, and on the pool otherwise', async () => {
    const syncs: bigint[] = [];
    let inline = true;
    const sync = new WalSync(
      path,
      (began) => syncs.push(began),
      () => inline,
    );
    // Inline: the fdatasync has returned by the time durable() does, before its promise settles.
    const first = sync.durable();
    expect(syncs).toHaveLength(1);
    await first;
    db.prepare('INSERT INTO t VALUES (1)').run();
    sync.committed();
    const second = sync.durable();
    expect(syncs).toHaveLength(2);
    await second;
    // Nothing committed since: no sync at all.
    await sync.durable();
    expect(syncs).toHaveLength(2);
    // Not asked to: the pool's fdatasync, observed only once it has returned.
    inline = false;
    db.prepare('INSERT INTO t VALUES (2)').run();
    sync.committed();
    const pooled = sync.durable();
    expect(syncs).toHaveLength(2);
    // While that one runs, a later commit waits for the pool's next fdatasync even though inline
    // is allowed again: one fdatasync at a time.
    inline = true;
    db.prepare('INSERT INTO t VALUES (3)').run();
    sync.committed();
    const queued = sync.durable();
    expect(syncs).toHaveLength(2);
    await Promise.all([pooled, queued]);
    expect(syncs).toHaveLength(4);
    sync.close();
  });

  it('once closed, refuses a wait instead of syncing on the calling thread', async () => {
    const sync = new WalSync(path, undefined, () => true);
    await sync.durable();
    sync.close();
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
