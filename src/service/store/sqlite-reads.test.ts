import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allowPolicy } from '../../../test/helpers/records.js';
import { openSqliteStore, readConn } from './sqlite.js';
import type { Store } from './types.js';

const NOW = 1_700_000_000_000;

describe('SQLite reads outside a write', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-reads-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Two databases told apart by what they hold: the writer's and the reader's. */
  function pair(): { writer: Database.Database; reader: Database.Database } {
    const open = (name: string) => {
      const db = new Database(join(dir, `${name}.db`));
      db.exec('CREATE TABLE t (v TEXT)');
      db.prepare('INSERT INTO t VALUES (?)').run(name);
      return db;
    };
    return { writer: open('writer'), reader: open('reader') };
  }

  it('run on the writer while it holds no transaction, on the reader while a batch is open on it', async () => {
    const { writer, reader } = pair();
    const read = readConn(writer, reader).prepare('SELECT v FROM t');
    expect(await read.get()).toEqual({ v: 'writer' });
    writer.exec('BEGIN IMMEDIATE');
    expect(await read.get()).toEqual({ v: 'reader' });
    expect(await read.all()).toEqual([{ v: 'reader' }]);
    writer.exec('COMMIT');
    expect(await read.all()).toEqual([{ v: 'writer' }]);
    writer.close();
    reader.close();
  });

  it('refuse a statement that writes, before it runs', async () => {
    const { writer, reader } = pair();
    const conn = readConn(writer, reader);
    await expect(conn.prepare("INSERT INTO t VALUES ('x')").run()).rejects.toThrow(
      /a read ran a statement that writes/,
    );
    await expect(conn.prepare('DELETE FROM t').run()).rejects.toThrow(/writes/);
    expect(writer.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 1 });
    writer.close();
    reader.close();
  });

  describe('through the store', () => {
    let store: Store;
    let org: string;
    beforeEach(async () => {
      store = openSqliteStore(join(dir, 'service.db'));
      org = randomUUID();
      await store.write(async (tx) => {
        await tx.insertOrganization({
          id: org,
          name: 'o',
          parentId: null,
          rootQuorumThreshold: 1,
          createdAtMs: NOW,
        });
      });
    });
    afterEach(() => store.close());

    it('a read made while a batch is open does not see its rows; once it commits, a read does', async () => {
      let during: unknown[] = ['not read'];
      await store.write(async (tx) => {
        await tx.insertPolicy(allowPolicy(org, 'p1', NOW));
        during = await store.listPolicies(org);
      });
      expect(during).toEqual([]);
      expect((await store.listPolicies(org)).map((p) => p.name)).toEqual(['p1']);
    });

    it('a batch that rolls a write back leaves nothing a later read (on the writer) could see', async () => {
      await store
        .write(async (tx) => {
          await tx.insertPolicy(allowPolicy(org, 'gone', NOW));
          throw new Error('refused');
        })
        .catch(() => undefined);
      expect(await store.listPolicies(org)).toEqual([]);
    });
  });
});
