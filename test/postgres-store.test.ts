/**
 * The service on the PostgreSQL store: initialization happens once per database, even when two
 * services start at once on an empty one; a restart serves what is there; another master key is a
 * clear start-up error, never a second organization.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedService } from '../src/service/embedded.js';
import { createTestDatabase, type TestDatabase } from './helpers/pgdb.js';

const logger = pino({ level: 'silent' });
const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const run = (args: string[], env: Record<string, string> = {}) =>
  promisify(execFile)(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
const dirs: string[] = [];
const dbs: TestDatabase[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'cs-pg-'));
  dirs.push(d);
  return d;
};

afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const db of dbs) await db.drop();
});

const organizations = async (url: string): Promise<number> => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query('SELECT COUNT(*) AS n FROM organizations')).rows[0].n);
  } finally {
    await c.end();
  }
};

describe('the service on PostgreSQL', () => {
  it('initializes an empty database once when two services start on it at once', async () => {
    const db = await createTestDatabase('cs_init');
    dbs.push(db);
    const masterKeyEnv = randomBytes(32).toString('hex');
    const both = await Promise.allSettled(
      [dir(), dir()].map((dataDir) => openEmbeddedService({ dataDir, logger, store: db.url, masterKeyEnv })),
    );
    const opened = both.filter((r) => r.status === 'fulfilled');
    const refused = both.filter((r) => r.status === 'rejected');
    expect(opened).toHaveLength(1);
    // The other found it initialized and says what to do, instead of making a second organization.
    expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(
      /already initialized.*credentials\.json/,
    );
    expect(await organizations(db.url)).toBe(1);
    await (
      opened[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof openEmbeddedService>>>
    ).value.close();
  });

  it('serves an initialized database from another data dir with its credentials, and refuses another master key', async () => {
    const db = await createTestDatabase('cs_restart');
    dbs.push(db);
    const masterKeyEnv = randomBytes(32).toString('hex');
    const first = dir();
    const one = await openEmbeddedService({ dataDir: first, logger, store: db.url, masterKeyEnv });
    const org = one.credentials.organizationId;
    await one.close();

    const second = dir();
    copyFileSync(join(first, 'credentials.json'), join(second, 'credentials.json'));
    const two = await openEmbeddedService({ dataDir: second, logger, store: db.url, masterKeyEnv });
    expect(two.credentials.organizationId).toBe(org);
    expect((await two.store.getOrganization(org))?.id).toBe(org);
    await two.close();

    await expect(
      openEmbeddedService({
        dataDir: second,
        logger,
        store: db.url,
        masterKeyEnv: randomBytes(32).toString('hex'),
      }),
    ).rejects.toThrow(/master key does not open the keys in this store/);
    expect(await organizations(db.url)).toBe(1);
  });

  it('migrate applies the migrations and exits; init on an initialized database changes nothing and says so', async () => {
    const db = await createTestDatabase('cs_cli');
    dbs.push(db);
    const dataDir = dir();
    const migrated = await run(['migrate', '--store', db.url, '--data-dir', dataDir]);
    expect(JSON.parse(migrated.stdout)).toMatchObject({ migrated: true, store: 'postgres' });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const versions = await c.query('SELECT max(version) AS v FROM schema_migrations');
      expect(Number(versions.rows[0].v)).toBe(JSON.parse(migrated.stdout).schemaVersion);
    } finally {
      await c.end();
    }
    expect(await organizations(db.url)).toBe(0);
    const env = { COUNTERSIGN_MASTER_KEY: randomBytes(32).toString('hex') };
    const first = await run(['init', '--store', db.url, '--data-dir', dataDir], env);
    expect(JSON.parse(first.stdout)).toMatchObject({ initialized: true });
    const again = await run(['init', '--store', db.url, '--data-dir', dataDir], env);
    expect(JSON.parse(again.stdout)).toMatchObject({
      initialized: false,
      organizationId: JSON.parse(first.stdout).organizationId,
    });
    expect(again.stderr).toContain('already initialized');
    expect(await organizations(db.url)).toBe(1);
  }, 60_000);
});
