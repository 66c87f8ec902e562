/**
 * Readiness tells the truth: while the store cannot answer (the `stall-store` failpoint blocks the
 * service thread, and so its SQLite store, for a while), `/readyz` answers 503 and gRPC health
 * reports NOT_SERVING; both recover once the store answers again. Liveness stays up throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './helpers/pgdb.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const dirs: string[] = [];
let server: ServeProcess | undefined;
let pgServer: ServeProcess | undefined;
let db: TestDatabase | undefined;
afterAll(async () => {
  for (const s of [server, pgServer]) {
    s?.proc.kill('SIGKILL');
    await s?.exited;
  }
  await db?.drop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** Runs one statement as the local server's superuser, on the maintenance database. */
async function admin(sql: string): Promise<void> {
  const url = new URL(db?.url as string);
  url.pathname = '/postgres';
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

type HealthClient = grpc.Client & {
  check(
    req: { service: string },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
  ): void;
};

function healthClient(address: string): HealthClient {
  const def = protoLoader.loadSync(
    createRequire(import.meta.url).resolve('grpc-health-check/proto/health/v1/health.proto'),
    { enums: String },
  );
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  };
  return new pkg.grpc.health.v1.Health(address, grpc.credentials.createInsecure()) as unknown as HealthClient;
}

const grpcStatus = (c: HealthClient): Promise<string> =>
  new Promise((resolve, reject) =>
    c.check({ service: '' }, { deadline: Date.now() + 5_000 }, (err, res) =>
      err ? reject(err) : resolve(res?.status ?? ''),
    ),
  );

describe('readiness while the store stalls', () => {
  it('reports 503 and NOT_SERVING during the stall, 200 and SERVING after', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-stall-'));
    dirs.push(dataDir);
    // The first readiness round trip (the daemon's health check at start) stalls the store 10 s.
    server = await startServe(['--data-dir', dataDir], {
      COUNTERSIGN_FAILPOINT: 'stall-store',
      COUNTERSIGN_FAILPOINT_MS: '10000',
    });
    const api = server.ready.api as string;
    const health = healthClient(server.ready.grpc);
    try {
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
      const stalled = await fetch(`${api}/readyz`);
      expect(stalled.status).toBe(503);
      expect(await grpcStatus(health)).toBe('NOT_SERVING');

      // Recovery: poll (no timing threshold; the test's own timeout bounds it).
      let ready = 0;
      while (ready !== 200) {
        await sleep(250);
        ready = (await fetch(`${api}/readyz`)).status;
      }
      let status = '';
      while (status !== 'SERVING') {
        await sleep(250);
        status = await grpcStatus(health);
      }
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
    } finally {
      health.close();
    }
  }, 60_000);
});

describe('readiness while the PostgreSQL database is unreachable', () => {
  it('reports 503 and NOT_SERVING while the database refuses connections, 200 and SERVING after', async () => {
    db = await createTestDatabase('cs_ready');
    const name = new URL(db.url).pathname.slice(1);
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-pgready-'));
    dirs.push(dataDir);
    pgServer = await startServe(['--data-dir', dataDir, '--store', db.url], {
      COUNTERSIGN_MASTER_KEY: randomBytes(32).toString('hex'),
    });
    const api = pgServer.ready.api as string;
    const health = healthClient(pgServer.ready.grpc);
    try {
      expect((await fetch(`${api}/readyz`)).status).toBe(200);
      expect(await grpcStatus(health)).toBe('SERVING');

      // "Stop" this test's database (the server itself is shared): no new connections, and the
      // service's open ones are cut.
      await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
      let ready = 200;
      while (ready !== 503) {
        await sleep(250);
        ready = (await fetch(`${api}/readyz`)).status;
      }
      let status = '';
      while (status !== 'NOT_SERVING') {
        await sleep(250);
        status = await grpcStatus(health);
      }
      // Liveness is not readiness: the process is up and says so.
      expect((await fetch(`${api}/healthz`)).status).toBe(200);

      await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      while (ready !== 200) {
        await sleep(250);
        ready = (await fetch(`${api}/readyz`)).status;
      }
      while (status !== 'SERVING') {
        await sleep(250);
        status = await grpcStatus(health);
      }
      // The process survived its connections being cut (no unhandled pool error).
      expect(pgServer.proc.exitCode).toBeNull();
    } finally {
      health.close();
    }
  }, 90_000);
});
