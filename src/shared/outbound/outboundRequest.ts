/**
 * An HTTP(S) request to a guarded URL: the host is resolved here, every address it resolves to is
 * checked, and the connection goes to the checked address itself (the name is kept for `Host` and
 * TLS SNI and certificate checks), so a DNS answer cannot change between check and dial. No
 * redirect is followed, the whole exchange has a deadline, and the response body is read up to a cap.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { CountersignError } from '../errors.js';
import { classifyAddress } from './classifyAddress.js';
import { addressAllowed, checkOutboundUrl, refusalReason, type OutboundPolicy } from './guard.js';

/** Resolves a host name to its addresses (tests pass their own to avoid real DNS). */
export type ResolveHost = (host: string) => Promise<readonly { address: string; family: number }[]>;

export interface OutboundRequestOptions {
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array | string;
  /** Deadline for the whole exchange, connect to last byte (default 10 s). */
  readonly timeoutMs?: number;
  /** Response bytes kept; the rest is discarded and `truncated` set (default 64 KiB). */
  readonly maxResponseBytes?: number;
  readonly policy: OutboundPolicy;
  /** The request field the URL came from, for errors (default `url`). */
  readonly field?: string;
  readonly resolve?: ResolveHost;
  /** Test seam: replaces the socket factory (a test passes one that fails if it is ever reached). */
  readonly createConnection?: () => Socket;
}

export interface OutboundResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Uint8Array;
  readonly truncated: boolean;
  /** The address actually dialled. */
  readonly address: string;
}

const defaultResolve: ResolveHost = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Resolves and checks the host; returns the first allowed address, or refuses naming why. */
async function pickAddress(url: URL, opts: OutboundRequestOptions): Promise<string> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) return host; // literal: checked by checkOutboundUrl
  const field = opts.field ?? 'url';
  let answers: readonly { address: string }[];
  try {
    answers = await (opts.resolve ?? defaultResolve)(host);
  } catch (e) {
    throw new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: could not resolve ${host}`, {
      field,
      cause: e,
    });
  }
  if (answers.length === 0) {
    throw new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: ${host} has no address`, { field });
  }
  // Every answer must pass: a name that resolves to one public and one private address is refused,
  // since which one a later lookup returns is the resolver's choice, not ours.
  for (const a of answers) {
    const cls = classifyAddress(a.address);
    if (!addressAllowed(cls, opts.policy)) {
      throw new CountersignError('OUTBOUND_URL_REFUSED', `${field}: ${host} ${refusalReason(cls)}`, {
        field,
      });
    }
  }
  return (answers[0] as { address: string }).address;
}

/** Sends one request through the guard and reads the answer (redirects are returned, not followed). */
export async function outboundRequest(opts: OutboundRequestOptions): Promise<OutboundResponse> {
  const field = opts.field ?? 'url';
  const url = checkOutboundUrl(opts.url, opts.policy, field);
  const address = await pickAddress(url, opts);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const cap = opts.maxResponseBytes ?? 64 * 1024;
  const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
  const hostHeader = url.host;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;

  return new Promise<OutboundResponse>((resolve, reject) => {
    let settled = false;
    const fail = (e: CountersignError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(e);
    };
    const req = send({
      host: address,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: opts.method ?? 'POST',
      headers: {
        host: hostHeader,
        ...(body === undefined ? {} : { 'content-length': String(body.length) }),
        ...opts.headers,
      },
      // SNI and the certificate check use the name, not the address dialled.
      servername: isIP(url.hostname) === 0 ? url.hostname : undefined,
      agent: false,
      ...(opts.createConnection === undefined ? {} : { createConnection: opts.createConnection }),
    });
    const timer = setTimeout(
      () =>
        fail(
          new CountersignError(
            'OUTBOUND_REQUEST_FAILED',
            `${field}: no complete answer within ${timeoutMs} ms`,
            {
              field,
            },
          ),
        ),
      timeoutMs,
    );
    req.on('error', (e) =>
      fail(
        new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: request failed (${e.message})`, {
          field,
          cause: e,
        }),
      ),
    );
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      res.on('data', (c: Buffer) => {
        if (kept >= cap) {
          truncated = true;
          return;
        }
        const take = c.subarray(0, cap - kept);
        if (take.length < c.length) truncated = true;
        chunks.push(take);
        kept += take.length;
      });
      res.on('error', (e) =>
        fail(
          new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: response failed (${e.message})`, {
            field,
            cause: e,
          }),
        ),
      );
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          truncated,
          address,
        });
      });
    });
    req.end(body);
  });
}
