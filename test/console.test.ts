/**
 * The console without a browser: every answer under /console/ carries the strict CSP; the checked-in
 * build matches its sources; `countersign console invite` prints the one-time link last; an invite
 * link redeems once; --console-origin refuses what WebAuthn cannot serve.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pino from 'pino';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openEmbeddedService, type EmbeddedService } from '../src/service/embedded.js';
import { startHttpServer, type HttpListener } from '../src/service/api/http-server.js';
import { publicApiRoute } from '../src/service/api/routes.js';
import { CONSOLE_REDEEM_PATH } from '../src/service/console/invite.js';
import { CONSOLE_DIST } from '../src/service/console/static.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
let service: EmbeddedService;
let http: HttpListener;
let base: string;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'countersign-console-'));
  dirs.push(dataDir);
  const logger = pino({ level: 'silent' });
  service = await openEmbeddedService({ dataDir, logger });
  http = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: service.handler,
    logger,
    console: true,
    routeExists: (p) => publicApiRoute(p) || p === CONSOLE_REDEEM_PATH,
  });
  base = `http://${http.address}`;
});

afterAll(async () => {
  await http?.close();
  await service?.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('console over HTTP', () => {
  it('answers every path under /console/ with a CSP that allows no inline script', async () => {
    const asset = files(CONSOLE_DIST).find((f) => f.endsWith('.js')) as string;
    const paths = [
      '/console',
      '/console/',
      '/console/invite',
      `/console/${asset}`,
      '/console/assets/missing.js',
      '/console/assets/..%2f..%2fpackage.json',
    ];
    for (const p of paths) {
      const res = await fetch(`${base}${p}`, { redirect: 'manual' });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, p).toContain("script-src 'self'");
      expect(csp, p).toContain("default-src 'none'");
      expect(csp, p).not.toContain('unsafe-inline');
      expect(csp, p).toContain("frame-ancestors 'none'");
      const body = await res.text();
      expect(body, p).not.toContain('"name": "countersign"');
    }
    const index = await fetch(`${base}/console/invite`);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await index.text();
    // The page has no inline script: every <script> names its source.
    expect(html.match(/<script\b[^>]*>/g)?.every((t) => /\bsrc=/.test(t))).toBe(true);
    const js = await fetch(`${base}/console/${asset}`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${base}/console/assets/missing.js`)).status).toBe(404);
  });

  it('refuses a redemption without the invite key stamp, by name', async () => {
    const res = await fetch(`${base}${CONSOLE_REDEEM_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toMatch(/missing a stamp/);
  });
});

describe('console build', () => {
  it('the checked-in console/dist is what the sources build to (npm run build:console)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'countersign-console-build-'));
    dirs.push(out);
    // Vitest runs with NODE_ENV=test, which Vite would build a development bundle for.
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    await build({
      configFile: join(ROOT, 'console/vite.config.ts'),
      build: { outDir: out, emptyOutDir: true },
      logLevel: 'silent',
    }).finally(() => {
      process.env.NODE_ENV = env;
    });
    expect(files(out)).toEqual(files(CONSOLE_DIST));
    for (const f of files(out))
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(CONSOLE_DIST, f), 'utf8'));
  });
});

describe('countersign console invite', () => {
  it('creates the user when missing and prints the one-time link as its last line', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-invite-'));
    dirs.push(dataDir);
    const args = [BIN, 'console', 'invite', '--data-dir', dataDir, '--log-level', 'silent'];
    const { stdout } = await run(process.execPath, [
      ...args,
      '--user-name',
      'carol',
      '--api-listen',
      '0.0.0.0:9443',
    ]);
    const last = stdout.trim().split('\n').pop() as string;
    expect(last).toMatch(/^http:\/\/localhost:9443\/console\/invite#[0-9a-f-]{36}\.[0-9a-f]{64}$/);
    const withOrigin = await run(process.execPath, [
      ...args,
      '--user-name',
      'carol',
      '--console-origin',
      'https://console.example.com',
    ]);
    expect(withOrigin.stdout.trim().split('\n').pop()).toMatch(
      /^https:\/\/console\.example\.com\/console\/invite#/,
    );
    await expect(run(process.execPath, [...args])).rejects.toMatchObject({ code: 2 });
  });

  it('--console-origin refuses an IP address and a path', () => {
    expect(() => loadConfig(['serve', '--console-origin', 'http://127.0.0.1:8080'], {})).toThrow(
      /refuses IP addresses/,
    );
    expect(() => loadConfig(['serve', '--console-origin', 'https://a.example/console'], {})).toThrow(
      /without a path/,
    );
    expect(loadConfig(['serve', '--console-origin', 'https://a.example:8443'], {}).config.consoleOrigin).toBe(
      'https://a.example:8443',
    );
  });
});
