import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CountersignError } from '../errors.js';
import { outboundRequest, type ResolveHost } from './outboundRequest.js';

/** A socket factory that fails the test if the guard ever lets a request reach the network. */
const neverDial = (): Socket => {
  throw new Error('the guard let a request reach connect()');
};

async function refusal(p: Promise<unknown>): Promise<CountersignError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('outboundRequest', () => {
  let server: Server;
  let port = 0;
  const seen: { host: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ host: req.headers.host, body });
        if (req.url === '/redirect') {
          res.writeHead(302, { location: 'http://10.0.0.1/' });
          res.end();
        } else if (req.url === '/big') {
          res.end('x'.repeat(100_000));
        } else if (req.url === '/slow') {
          setTimeout(() => res.end('late'), 2_000);
        } else {
          res.end('ok');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses a name that resolves to a private, link-local or mixed set of addresses before any socket', async () => {
    for (const answers of [
      [{ address: '10.0.0.5', family: 4 }],
      [{ address: '169.254.169.254', family: 4 }],
      [{ address: 'fd12::1', family: 6 }],
      [
        { address: '93.184.216.34', family: 4 },
        { address: '192.168.0.10', family: 4 },
      ],
    ]) {
      const resolve: ResolveHost = async () => answers;
      const e = await refusal(
        outboundRequest({
          url: 'https://hooks.example.test/x',
          policy: { allowPrivateNetwork: false },
          resolve,
          createConnection: neverDial,
        }),
      );
      expect(e.code).toBe('OUTBOUND_URL_REFUSED');
      expect(e.message).toContain('hooks.example.test');
    }
  });

  it('refuses loopback literals without the flag before any socket', async () => {
    const e = await refusal(
      outboundRequest({
        url: `http://127.0.0.1:${port}/`,
        policy: { allowPrivateNetwork: false },
        createConnection: neverDial,
      }),
    );
    expect(e.code).toBe('OUTBOUND_URL_REFUSED');
    expect(seen).toHaveLength(0);
  });

  it('with the flag, dials the checked address and keeps the name in Host', async () => {
    const resolve: ResolveHost = async () => [{ address: '127.0.0.1', family: 4 }];
    const res = await outboundRequest({
      url: `http://receiver.localhost:${port}/hook`,
      body: '{"a":1}',
      policy: { allowPrivateNetwork: true },
      resolve,
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body).toString()).toBe('ok');
    expect(res.address).toBe('127.0.0.1');
    expect(seen.at(-1)).toEqual({ host: `receiver.localhost:${port}`, body: '{"a":1}' });
  });

  it('returns a redirect without following it', async () => {
    const before = seen.length;
    const res = await outboundRequest({
      url: `http://127.0.0.1:${port}/redirect`,
      policy: { allowPrivateNetwork: true },
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://10.0.0.1/');
    expect(seen.length).toBe(before + 1);
  });

  it('keeps at most maxResponseBytes of the body', async () => {
    const res = await outboundRequest({
      url: `http://127.0.0.1:${port}/big`,
      method: 'GET',
      maxResponseBytes: 1000,
      policy: { allowPrivateNetwork: true },
    });
    expect(res.body.length).toBe(1000);
    expect(res.truncated).toBe(true);
  });

  it('gives up at its deadline with OUTBOUND_REQUEST_FAILED', async () => {
    const e = await refusal(
      outboundRequest({
        url: `http://127.0.0.1:${port}/slow`,
        timeoutMs: 100,
        policy: { allowPrivateNetwork: true },
      }),
    );
    expect(e.code).toBe('OUTBOUND_REQUEST_FAILED');
    expect(e.message).toMatch(/within 100 ms/);
  });
});
