/**
 * Serves the prebuilt web console (console/dist, checked in) at `/console/` on the public API
 * listener. Every answer under `/console/` carries a strict Content-Security-Policy: scripts and
 * styles from this origin only (no inline script), requests to this origin only, no framing.
 * Paths that are not files (`/console/`, `/console/invite`, …) get the app's index.html.
 */
import { readFileSync, statSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from 'node:http';

export const CONSOLE_PREFIX = '/console';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The checked-in build, beside src/ (and beside dist/ in a compiled install). */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`);
}

function readFileIn(dir: string, rel: string): Buffer | undefined {
  const full = resolve(dir, rel);
  if (!full.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return undefined;
  try {
    if (!statSync(full).isFile()) return undefined;
    return readFileSync(full);
  } catch {
    return undefined;
  }
}

/** Answers a GET under /console/ (files are read per request: the build is small and may be rebuilt). */
export function serveConsole(res: ServerResponse, path: string, dir: string = CONSOLE_DIST): void {
  if (path === CONSOLE_PREFIX) {
    res.writeHead(308, { location: `${CONSOLE_PREFIX}/`, ...SECURITY_HEADERS });
    res.end();
    return;
  }
  let rel: string;
  try {
    rel = decodeURIComponent(path.slice(CONSOLE_PREFIX.length + 1));
  } catch {
    rel = '';
  }
  const asset = rel.startsWith('assets/') ? readFileIn(dir, rel) : undefined;
  if (asset !== undefined) {
    res.writeHead(200, {
      'content-type': TYPES[extname(rel)] ?? 'application/octet-stream',
      // Hashed names: an asset never changes under its name.
      'cache-control': 'public, max-age=31536000, immutable',
      ...SECURITY_HEADERS,
    });
    res.end(asset);
    return;
  }
  if (rel.startsWith('assets/')) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
    res.end('not found');
    return;
  }
  const index = readFileIn(dir, 'index.html');
  if (index === undefined) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
    res.end('the console is not built: run npm run build:console');
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES['.html'] as string,
    'cache-control': 'no-cache',
    ...SECURITY_HEADERS,
  });
  res.end(index);
}
