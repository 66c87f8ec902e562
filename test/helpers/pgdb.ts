/**
 * A fresh PostgreSQL database per test file on the local server (127.0.0.1:5432, trust auth),
 * dropped afterwards. `COUNTERSIGN_TEST_PG` overrides the server URL (without a database name).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const SERVER = process.env.COUNTERSIGN_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432';

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 'cs'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: `${SERVER}/${name}`,
    drop: async () => {
      const c = new pg.Client({ connectionString: `${SERVER}/postgres` });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
