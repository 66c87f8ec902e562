/**
 * The public API over HTTP: `POST /public/v1/{submit,query}/<name>`, `/healthz`, `/readyz`,
 * `/metrics`. Work is refused as early as it can be: a bound on requests in flight, the media type,
 * the declared length, a small body cap until a stamp is presented, then the API-key stamp's
 * signature checked on the bytes as they arrived — all before the body is handed to the service
 * thread or parsed. Slow clients are cut by header and request timeouts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { RequestHandler } from '../../shared/request-handler.js';
import { CountersignError, isCountersignError, toRpcStatus } from '../../shared/errors.js';
import { parseStamp, verifyApiKeyStamp } from './stamp.js';
import { parseAttestedStamp } from './attestedStamp.js'; // --- auth proxy ---
import { isConsolePath, serveConsole } from '../console/static.js'; // --- console ---

export interface HttpListener {
  /** `host:port` actually bound. */
  readonly address: string;
  /** Prometheus text of this listener's refusals (closed label sets). */
  metricsText(): string;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  readonly handler: RequestHandler;
  /** Prometheus text for `GET /metrics` (this listener's own counters are appended). */
  readonly metrics?: () => string | Promise<string>;
  readonly logger: Logger;
  /** The listener's name in metric labels (default `api`). */
  readonly name?: string;
  /** Largest stamped body (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Largest body read before a stamp is presented (default 64 KiB). */
  readonly maxUnstampedBodyBytes?: number;
  /** Requests handled at once; beyond it 503 with Retry-After (default 256). */
  readonly maxInFlight?: number;
  /** Time a client has to send its headers (default 10 s) and its whole request (default 30 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  /** Whether a POST path is served; unknown paths are refused before their body is read. */
  readonly routeExists?: (path: string) => boolean;
  /** The refusal of a POST path `routeExists` rejects (default: ROUTE_NOT_FOUND). */
  readonly unservedRoute?: (path: string) => CountersignError;
  /**
   * Readiness: a round trip through the service and its store. `/healthz` and `/readyz` answer 503
   * while it fails. Without it they answer 200 as long as the listener runs.
   */
  readonly probe?: () => Promise<boolean>;
  /**
   * Requests per second one API key may make (token bucket with a burst of twice that); beyond it
   * 429 with Retry-After. 0 or absent: no limit.
   */
  readonly rateLimitPerKey?: number;
  /** Extra GET routes (path → JSON body). */
  readonly extraRoutes?: Readonly<Record<string, () => unknown>>;
  /** Serve the web console at /console/ (the public API listener). */
  readonly console?: boolean; // --- console ---
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-allow-headers':
    'content-type, x-stamp, x-stamp-webauthn, x-stamp-attested, x-client-version, accept',
};

/** Why a request was refused before it reached the service: a closed set, used as a metric label. */
const REFUSALS = [
  'in_flight',
  'body_too_large',
  'unsupported_media_type',
  'route_not_found',
  'stamp',
  'body_unreadable',
  'rate_limited',
] as const;
type Refusal = (typeof REFUSALS)[number];

function sendJson(
  res: ServerResponse,
  status: number,
  body: Uint8Array | string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...CORS_HEADERS, ...extra });
  res.end(body);
}

function sendError(res: ServerResponse, e: CountersignError, status = e.httpStatus, extra = {}): void {
  sendJson(res, status, JSON.stringify(toRpcStatus(e)), extra);
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Token buckets per key (a stamp's public key or credential id). Buckets that refilled are dropped
 * when the map grows, so keys an attacker makes up cost nothing lasting.
 */
class KeyRateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly perSecond: number) {}

  /** Takes one token; returns undefined if allowed, else the milliseconds until one is available. */
  take(key: string, now = Date.now()): number | undefined {
    const burst = this.perSecond * 2;
    const b = this.#buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (this.#buckets.size >= 10_000) this.#sweep(now);
    this.#buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return ((1 - b.tokens) / this.perSecond) * 1000;
  }

  #sweep(now: number): void {
    for (const [k, b] of this.#buckets)
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.perSecond * 2) this.#buckets.delete(k);
  }
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim());

export async function startHttpServer(opts: HttpServerOptions): Promise<HttpListener> {
  const name = opts.name ?? 'api';
  const limit = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const unstampedLimit = Math.min(limit, opts.maxUnstampedBodyBytes ?? 64 * 1024);
  const maxInFlight = opts.maxInFlight ?? 256;
  const log = opts.logger;
  const refused = new Map<Refusal, number>(REFUSALS.map((r) => [r, 0]));
  let inFlight = 0;
  const limiter =
    (opts.rateLimitPerKey ?? 0) > 0 ? new KeyRateLimiter(opts.rateLimitPerKey as number) : undefined;
  const refuse = (
    res: ServerResponse,
    reason: Refusal,
    e: CountersignError,
    status = e.httpStatus,
    extra: Record<string, string> = {},
  ) => {
    refused.set(reason, (refused.get(reason) ?? 0) + 1);
    // The body was not (or not all) read: close the connection rather than read what we refused.
    sendError(res, e, status, { connection: 'close', ...extra });
  };
  const metricsText = () =>
    [
      '# HELP countersign_http_refused_total Requests refused by a listener before reaching the service, by reason.',
      '# TYPE countersign_http_refused_total counter',
      ...[...refused].map(
        ([r, v]) => `countersign_http_refused_total{listener="${name}",reason="${r}"} ${v}`,
      ),
      '# HELP countersign_http_in_flight Requests being handled by a listener.',
      '# TYPE countersign_http_in_flight gauge',
      `countersign_http_in_flight{listener="${name}"} ${inFlight}`,
      '',
    ].join('\n');

  async function health(res: ServerResponse, path: string): Promise<void> {
    // Liveness (/healthz) is this process answering; readiness (/readyz) is a round trip through
    // the service and its store. A stalled store makes the pod unready, not restarted.
    const ok = path === '/healthz' || opts.probe === undefined ? true : await opts.probe().catch(() => false);
    sendJson(res, ok ? 200 : 503, JSON.stringify({ status: ok ? 'SERVING' : 'NOT_SERVING' }), {
      'cache-control': 'no-store',
    });
    if (!ok) log.warn({ path }, 'health check failed: the service or its store did not answer');
  }

  async function post(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (opts.routeExists !== undefined && !opts.routeExists(path))
      return refuse(
        res,
        'route_not_found',
        opts.unservedRoute?.(path) ?? new CountersignError('ROUTE_NOT_FOUND', `no route for POST ${path}`),
      );
    if (!isJson(req.headers['content-type']))
      return refuse(
        res,
        'unsupported_media_type',
        new CountersignError('REQUEST_MALFORMED', 'Content-Type must be application/json'),
        415,
      );
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    const stamped =
      headers['x-stamp'] !== undefined ||
      headers['x-stamp-webauthn'] !== undefined ||
      headers['x-stamp-attested'] !== undefined;
    const cap = stamped ? limit : unstampedLimit;
    const tooLarge = new CountersignError(
      'BODY_TOO_LARGE',
      stamped
        ? `request body is larger than ${cap} bytes`
        : `request body is larger than ${cap} bytes, the limit for a request without a stamp`,
    );
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > cap) return refuse(res, 'body_too_large', tooLarge, 413);
    let body: Uint8Array;
    try {
      body = await readBody(req, cap);
    } catch (e) {
      if (e instanceof BodyTooLarge) return refuse(res, 'body_too_large', tooLarge, 413);
      return refuse(
        res,
        'body_unreadable',
        new CountersignError('REQUEST_MALFORMED', 'could not read the request body'),
      );
    }
    // Authenticate before work: the signature of an API-key stamp is checked here, on the bytes as
    // they arrived; the service then maps the key to a user (and checks a passkey's signature, whose
    // public key only the store knows).
    let keyId: string;
    try {
      // --- auth proxy --- @turnkey/core's OTP login (the service checks the token it carries)
      if (headers['x-stamp-attested'] !== undefined && headers['x-stamp'] === undefined) {
        const a = parseAttestedStamp(headers['x-stamp-attested']);
        verifyApiKeyStamp(
          {
            kind: 'api_key',
            publicKey: a.publicKey,
            scheme: 'SIGNATURE_SCHEME_TK_API_P256',
            signature: a.signature,
          },
          body,
        );
        keyId = a.publicKey;
      } else {
        // --- end auth proxy ---
        const stamp = parseStamp(headers);
        if (stamp.kind === 'api_key') verifyApiKeyStamp(stamp, body);
        keyId = stamp.kind === 'api_key' ? stamp.publicKey : stamp.credentialId;
      }
    } catch (e) {
      if (isCountersignError(e)) return refuse(res, 'stamp', e);
      throw e;
    }
    const wait = limiter?.take(keyId);
    if (wait !== undefined)
      return refuse(
        res,
        'rate_limited',
        new CountersignError('RESOURCE_LIMIT_EXCEEDED', 'too many requests for this API key; retry later'),
        429,
        { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) },
      );
    const out = await opts.handler({ path, headers, body });
    sendJson(res, out.status, out.body);
  }

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS_HEADERS);
      res.end();
      return;
    }
    if (req.method === 'GET') {
      if (path === '/healthz' || path === '/readyz') return void health(res, path);
      if (path === '/metrics' && opts.metrics !== undefined) {
        void Promise.resolve(opts.metrics()).then(
          (text) => {
            res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
            res.end(text + metricsText());
          },
          () => sendError(res, new CountersignError('SERVICE_UNAVAILABLE', 'metrics are unavailable')),
        );
        return;
      }
      if (opts.console === true && isConsolePath(path)) return serveConsole(res, path); // --- console ---
      const extra = opts.extraRoutes?.[path];
      if (extra !== undefined) return sendJson(res, 200, JSON.stringify(extra()));
      // Published keys: unauthenticated, answered by the service, cacheable.
      if (path.startsWith('/public/v1/discovery/')) {
        void opts.handler({ path, headers: {}, body: new Uint8Array(0) }).then(
          (out) =>
            sendJson(
              res,
              out.status,
              out.body,
              out.status === 200 ? { 'cache-control': 'public, max-age=300' } : {},
            ),
          () => sendError(res, new CountersignError('SERVICE_UNAVAILABLE', 'the service did not answer')),
        );
        return;
      }
    }
    if (req.method !== 'POST') {
      const e = new CountersignError('ROUTE_NOT_FOUND', `no route for ${req.method ?? ''} ${path}`);
      return sendError(res, e, 404);
    }
    if (inFlight >= maxInFlight)
      return refuse(
        res,
        'in_flight',
        new CountersignError(
          'RESOURCE_LIMIT_EXCEEDED',
          `more than ${maxInFlight} requests in flight; retry later`,
        ),
        503,
        { 'retry-after': '1' },
      );
    inFlight++;
    post(req, res, path)
      .catch((e: unknown) => {
        log.error({ err: e, path }, 'request failed');
        if (!res.headersSent) sendError(res, new CountersignError('INTERNAL', 'internal server error'));
      })
      .finally(() => inFlight--);
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = opts.headersTimeoutMs ?? 10_000;
  server.requestTimeout = opts.requestTimeoutMs ?? 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    address: `${host}:${addr.port}`,
    metricsText,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
