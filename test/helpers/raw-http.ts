/** One HTTP/1.1 request sent as given, with no client-side checks, for the fuzz suites. */
import { request } from 'node:http';

export interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

/** Sends it and reads the whole answer; no answer within `hangMs` rejects (a hang, not a timing). */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array | string,
  hangMs: number,
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        timeout: hangMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${path} within ${hangMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
