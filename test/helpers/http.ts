/** Raw, stamped HTTP calls to the public API, for tests that need to control every byte. */
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import type { Credentials } from '../../src/service/embedded.js';

export interface RawResponse {
  status: number;
  json: Record<string, unknown>;
}

export interface PostOptions {
  /** Stamp these bytes instead of the body (to forge a stamp over a different body). */
  stampBody?: string;
  /** Stamp with another key pair. */
  keys?: { apiPublicKey: string; apiPrivateKey: string };
  /** Send no stamp at all. */
  noStamp?: boolean;
  /** More request headers. */
  headers?: Record<string, string>;
}

export async function post(
  baseUrl: string,
  creds: Credentials,
  path: string,
  body: string,
  opts: PostOptions = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers, 'content-type': 'application/json' };
  if (opts.noStamp !== true) {
    const stamper = new ApiKeyStamper(
      opts.keys ?? { apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey },
    );
    const stamp = await stamper.stamp(opts.stampBody ?? body);
    headers[stamp.stampHeaderName] = stamp.stampHeaderValue;
  }
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** An activity envelope as Turnkey's clients build it. */
export function envelope(
  type: string,
  organizationId: string,
  parameters: unknown,
  timestampMs: number = Date.now(),
): string {
  return JSON.stringify({ type, timestampMs: String(timestampMs), organizationId, parameters });
}
