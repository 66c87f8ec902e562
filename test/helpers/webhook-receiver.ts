/**
 * A real webhook receiver on 127.0.0.1 (ephemeral port) that keeps every request's raw body and
 * headers, and answers as the test says (status, delay, headers, or no answer at all).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyTurnkeyWebhookSignature, type TurnkeyWebhookVerificationKey } from '@turnkey/crypto';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The exact body bytes, as UTF-8 text. */
  readonly body: string;
  readonly atMs: number;
}

export interface Answer {
  readonly status?: number;
  readonly delayMs?: number;
  readonly headers?: Record<string, string>;
  /** Never answer (the sender's deadline ends the attempt). */
  readonly hang?: boolean;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Requests answered 2xx. */
  delivered(): ReceivedWebhook[];
  setAnswer(fn: (req: ReceivedWebhook, n: number) => Answer): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  answer: (req: ReceivedWebhook, n: number) => Answer = () => ({}),
): Promise<WebhookReceiver> {
  let respond = answer;
  const received: ReceivedWebhook[] = [];
  const ok = new Set<ReceivedWebhook>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedWebhook = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        atMs: Date.now(),
      };
      received.push(r);
      const a = respond(r, received.length - 1);
      if (a.hang === true) return;
      const send = () => {
        const status = a.status ?? 200;
        if (status >= 200 && status < 300) ok.add(r);
        res.writeHead(status, a.headers ?? {});
        res.end('ok');
      };
      if (a.delayMs === undefined) send();
      else setTimeout(send, a.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    delivered: () => received.filter((r) => ok.has(r)),
    setAnswer: (fn) => {
      respond = fn;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The JWKS at `<baseUrl>/public/v1/discovery/webhooks/jwks` as @turnkey/crypto's verification keys. */
export async function fetchWebhookKeys(baseUrl: string): Promise<TurnkeyWebhookVerificationKey[]> {
  const res = await fetch(`${baseUrl}/public/v1/discovery/webhooks/jwks`);
  if (res.status !== 200) throw new Error(`JWKS answered ${res.status}`);
  const jwks = (await res.json()) as { keys: { kid: string; x: string; crv: string }[] };
  return jwks.keys.map((k) => ({
    keyId: k.kid,
    publicKey: Buffer.from(k.x, 'base64url').toString('hex'),
    algorithm: 'ed25519',
  }));
}

/** True if @turnkey/crypto accepts the request's signature under these keys. */
export function verifies(r: ReceivedWebhook, keys: TurnkeyWebhookVerificationKey[]): boolean {
  return verifyTurnkeyWebhookSignature({
    headers: r.headers as Record<string, string | string[] | undefined>,
    body: r.body,
    verificationKeys: keys,
    // Generous: the burst tests check every request after the fact.
    maxTimestampAgeMs: 60 * 60 * 1000,
  }).ok;
}

/** Polls until `done()` is true (checked every 25 ms) or the deadline passes. */
export async function waitFor(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
