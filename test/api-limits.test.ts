/**
 * The public API refuses what it should before doing work (issue 9, the HTTP side), on the real
 * service thread behind the real HTTP listener: duplicate keys, oversized bodies, too many payloads,
 * deep nesting, invalid UTF-8, a missing media type, stale query stamps; closed metric labels under a
 * flood of unknown paths; slow clients; and a service thread that dies and comes back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStamper as RawStamper } from '../src/client/stamper.js';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { LOADER_OPTIONS } from '../src/daemon/proto.js';
import { startDaemon } from '../src/daemon/start-daemon.js';
import { startHttpServer, type HttpListener } from '../src/service/api/http-server.js';
import { startServiceWorker, type ServiceWorker } from '../src/service/worker-host.js';
import { envelope } from './helpers/http.js';

type Json = Record<string, any>;

describe('public API limits', () => {
  let dir: string;
  let service: ServiceWorker;
  let http: HttpListener;
  let base: string;
  let org: string;
  let eth: string;
  let rawStamper: RawStamper;
  const workers: Worker[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-api-limits-'));
    service = await startServiceWorker(
      {
        dataDir: dir,
        logLevel: 'silent',
        masterKeyEnv: undefined,
        maxRequestAgeMs: 60_000,
        maxClockSkewMs: 60_000,
        chainRpc: [],
      },
      { logger: pino({ level: 'silent' }), onSpawn: (w) => workers.push(w) },
    );
    org = service.credentials.organizationId;
    eth = service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')!.address;
    rawStamper = new RawStamper(service.credentials);
    http = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      handler: service.handler,
      metrics: async () => (await service.metrics()).text,
      probe: () => service.probe(1_000),
      routeExists: (p) =>
        p === '/public/v1/query/whoami' ||
        p.startsWith('/public/v1/submit/') ||
        p === '/public/v1/query/list_activities',
      logger: pino({ level: 'silent' }),
    });
    base = `http://${http.address}`;
  });

  afterAll(async () => {
    await http?.close();
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function post(
    path: string,
    body: string | Uint8Array,
    headers: Record<string, string> = {},
    stamp = true,
  ) {
    const h: Record<string, string> = { 'content-type': 'application/json', ...headers };
    if (stamp) {
      // Our own stamper signs the exact bytes (Turnkey's takes a string, so it could not sign bad UTF-8).
      h['x-stamp'] = rawStamper.stamp(typeof body === 'string' ? Buffer.from(body) : body);
    }
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: h, body: body as string });
    const text = await res.text();
    return { status: res.status, json: JSON.parse(text) as Json, headers: res.headers };
  }

  const activityCount = async () =>
    (
      (
        await post(
          '/public/v1/query/list_activities',
          JSON.stringify({ organizationId: org, paginationOptions: { limit: '100' } }),
        )
      ).json.activities as unknown[]
    ).length;

  const signBody = (payloads: string[]) =>
    envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', org, {
      signWith: eth,
      payloads,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });

  it('signs a valid request (the baseline the refusals are measured against)', async () => {
    const r = await post('/public/v1/submit/sign_raw_payloads', signBody(['11'.repeat(32)]));
    expect(r.status).toBe(200);
    expect(r.json.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('refuses duplicate keys, too many payloads, deep nesting and invalid UTF-8 with a clear 4xx, writing nothing', async () => {
    const before = await activityCount();
    const dup = signBody(['22'.repeat(32)]).replace('{"type"', `{"organizationId":"${org}","type"`);
    const a = await post('/public/v1/submit/sign_raw_payloads', dup);
    expect(a.status).toBe(400);
    expect(a.json.message).toBe('organizationId: the key appears more than once in one object');

    const many = await post(
      '/public/v1/submit/sign_raw_payloads',
      signBody(Array.from({ length: 101 }, () => '33'.repeat(32))),
    );
    expect(many.status).toBe(400);
    expect(many.json.message).toMatch(/^parameters\.payloads: at most 100 payloads per activity/);

    const deep = `{"type":"ACTIVITY_TYPE_SIGN_RAW_PAYLOADS","timestampMs":"${Date.now()}","organizationId":"${org}","parameters":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    const d = await post('/public/v1/submit/sign_raw_payloads', deep);
    expect(d.status).toBe(400);
    expect(d.json.message).toMatch(/nesting deeper than 32 levels/);

    const text = signBody(['44'.repeat(32)]);
    const bytes = Buffer.concat([
      Buffer.from(text.slice(0, -2)),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(text.slice(-2)),
    ]);
    const utf = await post('/public/v1/submit/sign_raw_payloads', bytes);
    expect(utf.status).toBe(400);
    expect(utf.json.message).toBe('request body is not valid UTF-8');
    expect(await activityCount()).toBe(before);
  });

  it('answers a 20 MB body with 413 and an rpc status, and caps an unstamped body at 64 KiB', async () => {
    const big = await post('/public/v1/submit/sign_raw_payloads', 'x'.repeat(20 * 1024 * 1024), {}, false);
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ code: 8, message: expect.stringContaining('larger than') });
    const unstamped = await post(
      '/public/v1/query/whoami',
      `{"organizationId":"${org}","pad":"${'y'.repeat(70_000)}"}`,
      {},
      false,
    );
    expect(unstamped.status).toBe(413);
    expect(unstamped.json.message).toContain('without a stamp');
  });

  it('requires Content-Type: application/json (415)', async () => {
    const res = await fetch(`${base}/public/v1/query/whoami`, {
      method: 'POST',
      body: `{"organizationId":"${org}"}`,
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as Json).message).toBe('Content-Type must be application/json');
  });

  it('holds a query that carries a stale timestampMs to the activity window', async () => {
    const r = await post(
      '/public/v1/query/whoami',
      JSON.stringify({ organizationId: org, timestampMs: String(Date.now() - 3_600_000) }),
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/^timestampMs: request is stale/);
    const ok = await post(
      '/public/v1/query/whoami',
      JSON.stringify({ organizationId: org, timestampMs: String(Date.now()) }),
    );
    expect(ok.status).toBe(200);
  });

  it('keeps /metrics small after 20,000 unstamped requests to unknown query paths, and signs right after', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    const once = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${base}/public/v1/query/no_such_query_${i}`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': '2' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 20_000) {
          const s = await once(next++);
          statuses.set(s, (statuses.get(s) ?? 0) + 1);
        }
      }),
    );
    agent.destroy();
    expect(statuses.get(404)).toBe(20_000);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics.length).toBeLessThan(20_000);
    expect(metrics).not.toContain('no_such_query');
    expect(metrics).toMatch(
      /countersign_http_refused_total\{listener="api",reason="route_not_found"\} 20000/,
    );
    const r = await post('/public/v1/submit/sign_raw_payloads', signBody(['55'.repeat(32)]));
    expect(r.json.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  }, 120_000);

  it('answers a normal request while 200 slow clients hold connections open', async () => {
    const sockets = Array.from({ length: 200 }, (_, i) => {
      const s = connect(Number(http.address.split(':')[1]), '127.0.0.1');
      s.on('error', () => {});
      // Half stall in the headers, half in the body.
      s.write(
        i % 2 === 0
          ? 'POST /public/v1/query/whoami HTTP/1.1\r\nHost: x\r\nContent-Type: application'
          : `POST /public/v1/query/whoami HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Stamp: e30\r\nContent-Length: 1000\r\n\r\n{"organizationId":`,
      );
      return s;
    });
    try {
      await new Promise((r) => setTimeout(r, 200));
      const r = await post('/public/v1/query/whoami', JSON.stringify({ organizationId: org }));
      expect(r.status).toBe(200);
      expect(r.json.organizationId).toBe(org);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('limits requests per API key when configured, answering 429 with Retry-After', async () => {
    const limited = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      handler: service.handler,
      rateLimitPerKey: 2,
      logger: pino({ level: 'silent' }),
    });
    try {
      const body = JSON.stringify({ organizationId: org });
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`http://${limited.address}/public/v1/query/whoami`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-stamp': rawStamper.stamp(Buffer.from(body)) },
          body,
        });
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
        await res.arrayBuffer();
      }
      // A burst of twice the rate passes, the rest is refused until tokens come back.
      expect(statuses.filter((x) => x === 200).length).toBeGreaterThanOrEqual(4);
      expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(4);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(limited.metricsText()).toMatch(/reason="rate_limited"\} [1-9]/);
    } finally {
      await limited.close();
    }
  });

  it('answers pending requests at once when the service thread dies, reports it, and serves again after the restart', async () => {
    // gRPC health through the daemon, probing the same service thread.
    const daemon = await startDaemon({
      listen: '127.0.0.1:0',
      client: new PublicApiClient({
        transport: inProcessTransport(service.handler),
        stamper: rawStamper,
        organizationId: org,
      }),
      defaultOrganizationId: org,
      idempotencyDbPath: join(dir, 'daemon.db'),
      logger: pino({ level: 'silent' }),
      probe: () => service.probe(500),
      healthIntervalMs: 50,
    });
    const healthDef = protoLoader.loadSync(
      join(process.cwd(), 'node_modules/grpc-health-check/proto/health/v1/health.proto'),
      LOADER_OPTIONS,
    );
    const Health = (grpc.loadPackageDefinition(healthDef) as any).grpc.health.v1
      .Health as grpc.ServiceClientConstructor;
    const health = new Health(daemon.address, grpc.credentials.createInsecure()) as any;
    const grpcHealth = () =>
      new Promise<string>((resolve, reject) =>
        health.Check({ service: 'countersign.v1.Signer' }, (e: Error | null, r: { status: string }) =>
          e ? reject(e) : resolve(r.status),
        ),
      );
    const grpcSeen = new Set<string>();
    const watcher = setInterval(
      () =>
        void grpcHealth().then(
          (s) => grpcSeen.add(s),
          () => {},
        ),
      20,
    );
    for (let i = 0; i < 100 && (await grpcHealth()) !== 'SERVING'; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await grpcHealth()).toBe('SERVING');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const dying = workers.at(-1)!;
    // The request in flight when the thread is killed records an activity but signs nothing:
    // terminating a thread while it is inside a call of a node-addon-api addon (secp256k1 and
    // keccak are) aborts the whole process, as node-addon-api documents for terminating
    // environments, and here that process is the test runner's.
    const pending = post(
      '/public/v1/submit/create_user_tag',
      envelope('ACTIVITY_TYPE_CREATE_USER_TAG', org, { userTagName: 'in-flight', userIds: [] }),
    );
    await new Promise((r) => setTimeout(r, 5));
    await dying.terminate();
    const answered = await pending;
    if (answered.status !== 200) {
      expect(answered.status).toBe(503);
      expect(answered.json.message).toContain('retry the same request');
    }
    // Until the new thread is up, health says so; then signing works again.
    let sawDown = false;
    // /readyz (the round trip through the service): /healthz is liveness only and stays 200.
    for (let i = 0; i < 200; i++) {
      const h = await fetch(`${base}/readyz`);
      if (h.status === 503) sawDown = true;
      if (h.status === 200 && workers.length > 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(workers.length).toBe(2);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const r = await post('/public/v1/submit/sign_raw_payloads', signBody(['77'.repeat(32)]));
    expect(r.json.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(sawDown).toBe(true);
    for (let i = 0; i < 100 && (await grpcHealth()) !== 'SERVING'; i++)
      await new Promise((r) => setTimeout(r, 20));
    clearInterval(watcher);
    expect(grpcSeen.has('NOT_SERVING')).toBe(true);
    expect(await grpcHealth()).toBe('SERVING');
    health.close();
    await daemon.close();
  });
});
