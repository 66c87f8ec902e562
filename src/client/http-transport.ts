/** The remote transport: one keep-alive HTTP(S) connection pool to a public API base URL. */
import http from 'node:http';
import https from 'node:https';
import { CountersignError } from '../shared/errors.js';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

export interface HttpTransportOptions {
  /** Whole-request deadline; defaults to 30 s. */
  readonly timeoutMs?: number;
  /** Largest response body accepted; defaults to 16 MiB. */
  readonly maxResponseBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** POSTs each request to `baseUrl` + path; network failures become UPSTREAM_UNAVAILABLE. */
export function httpTransport(baseUrl: string, options: HttpTransportOptions = {}): Transport {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', 'apiUrl: is not a URL', { field: 'apiUrl', cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CountersignError('CONFIG_INVALID', 'apiUrl: must be an http or https URL', { field: 'apiUrl' });
  }
  const secure = url.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const prefix = url.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  function once(req: TransportRequest): Promise<TransportResponse & { readonly retryable?: true }> {
    return new Promise((resolve, reject) => {
      const request = (secure ? https : http).request(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port,
          path: `${prefix}${req.path}`,
          method: 'POST',
          agent,
          timeout: timeoutMs,
          headers: {
            ...req.headers,
            'content-type': 'application/json',
            'content-length': String(req.body.byteLength),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              res.destroy();
              reject(new CountersignError('UPSTREAM_ERROR', `public API response exceeds ${maxBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: new Uint8Array(Buffer.concat(chunks)) });
          });
          res.on('error', (cause) => reject(unavailable(cause)));
        },
      );
      request.on('timeout', () => {
        request.destroy(
          new CountersignError('UPSTREAM_UNAVAILABLE', `public API did not answer within ${timeoutMs} ms`),
        );
      });
      request.on('error', (cause) => {
        // A kept-alive socket the server closed meanwhile fails before any byte is answered; such a
        // request never reached the service, so it is sent once more on a fresh socket.
        if (request.reusedSocket && (cause as NodeJS.ErrnoException).code === 'ECONNRESET') {
          resolve({ status: 0, body: new Uint8Array(0), retryable: true });
          return;
        }
        reject(cause instanceof CountersignError ? cause : unavailable(cause));
      });
      request.end(req.body);
    });
  }

  return {
    async send(req) {
      const first = await once(req);
      if (first.retryable !== true) return first;
      const second = await once(req);
      if (second.retryable === true) throw unavailable(new Error('connection reset'));
      return second;
    },
    async close() {
      agent.destroy();
    },
  };
}

function unavailable(cause: unknown): CountersignError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return new CountersignError(
    'UPSTREAM_UNAVAILABLE',
    `public API unreachable${typeof code === 'string' ? ` (${code})` : ''}`,
    { cause },
  );
}
