/** The public API over HTTP: `POST /public/v1/{submit,query}/<name>`, `/healthz`, `/metrics`. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { RequestHandler } from '../../client/transport.js';
import { CountersignError, toRpcStatus } from '../../shared/errors.js';

export interface HttpListener {
  /** `host:port` actually bound. */
  readonly address: string;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  readonly handler: RequestHandler;
  /** Prometheus text for `GET /metrics`. */
  readonly metrics?: () => string | Promise<string>;
  readonly logger: Logger;
  readonly maxBodyBytes?: number;
  /** Extra GET routes (path → JSON body). */
  readonly extraRoutes?: Readonly<Record<string, () => unknown>>;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-allow-headers': 'content-type, x-stamp, x-stamp-webauthn, x-client-version, accept',
};

function sendJson(res: ServerResponse, status: number, body: Uint8Array | string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...CORS_HEADERS });
  res.end(body);
}

function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new CountersignError('BODY_TOO_LARGE', `request body is larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startHttpServer(opts: HttpServerOptions): Promise<HttpListener> {
  const limit = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS_HEADERS);
      res.end();
      return;
    }
    if (req.method === 'GET') {
      if (path === '/healthz') return sendJson(res, 200, '{"status":"SERVING"}');
      if (path === '/metrics' && opts.metrics !== undefined) {
        void Promise.resolve(opts.metrics()).then((text) => {
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
          res.end(text);
        });
        return;
      }
      const extra = opts.extraRoutes?.[path];
      if (extra !== undefined) return sendJson(res, 200, JSON.stringify(extra()));
    }
    if (req.method !== 'POST') {
      const e = new CountersignError('ROUTE_NOT_FOUND', `no route for ${req.method ?? ''} ${path}`);
      return sendJson(res, 404, JSON.stringify(toRpcStatus(e)));
    }
    readBody(req, limit)
      .then(async (body) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        const out = await opts.handler({ path, headers, body });
        sendJson(res, out.status, out.body);
      })
      .catch((e: unknown) => {
        const err =
          e instanceof CountersignError
            ? e
            : new CountersignError('REQUEST_MALFORMED', 'could not read the request body');
        if (!res.headersSent) sendJson(res, err.httpStatus, JSON.stringify(toRpcStatus(err)));
      });
  });
  server.keepAliveTimeout = 65_000;
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
