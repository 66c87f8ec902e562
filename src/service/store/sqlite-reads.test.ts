import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConn } from './sqlite.js';

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
});
