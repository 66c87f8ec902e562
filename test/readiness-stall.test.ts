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
import { startServe, type ServeProcess } from './helpers/serve.js';

const dirs: string[] = [];
let server: ServeProcess | undefined;
afterAll(async () => {
  server?.proc.kill('SIGKILL');
  await server?.exited;
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

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
