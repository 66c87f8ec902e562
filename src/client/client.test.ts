import { createECDH, createPublicKey, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CountersignError } from '../shared/errors.js';
import { PublicApiClient } from './client.js';
import { httpTransport } from './http-transport.js';
import { inProcessTransport } from './in-process-transport.js';
import { ApiKeyStamper } from './stamper.js';
import type { Transport } from './transport.js';

const ORG = '00000000-0000-4000-8000-000000000001';

function newStamper(): ApiKeyStamper {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return new ApiKeyStamper({
    apiPublicKey: ecdh.getPublicKey('hex', 'compressed'),
    apiPrivateKey: ecdh.getPrivateKey().toString('hex').padStart(64, '0'),
  });
}

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A real HTTP peer that answers each path with a fixed status and raw body. */
const answers = new Map<string, { status: number; body: string }>();
const received: Received[] = [];
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
      const answer = answers.get(path) ?? {
        status: 404,
        body: '{"code":5,"message":"no route","details":[]}',
      };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function clientFor(transport: Transport, stamper = newStamper()): PublicApiClient {
  return new PublicApiClient({ transport, stamper, organizationId: ORG });
}

const activityJson = {
  activity: {
    id: 'act-1',
    organizationId: ORG,
    status: 'ACTIVITY_STATUS_COMPLETED',
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
    intent: {},
    result: { signRawPayloadsResult: { signatures: [] } },
    votes: [],
    fingerprint: 'sha256:00',
    canApprove: false,
    canReject: false,
    failure: null,
  },
};

describe('PublicApiClient', () => {
  it('builds the activity body with keys in envelope order and timestampMs as a decimal string', () => {
    const client = clientFor(inProcessTransport(async () => ({ status: 200, body: new Uint8Array() })));
    const body = client.buildActivityBody({
      type: 'ACTIVITY_TYPE_X',
      parameters: { b: 1, a: 2 },
      timestampMs: 1745383555123n,
    });
    expect(new TextDecoder().decode(body)).toBe(
      `{"type":"ACTIVITY_TYPE_X","timestampMs":"1745383555123","organizationId":"${ORG}","parameters":{"b":1,"a":2}}`,
    );
    const other = client.buildActivityBody({ type: 'T', organizationId: 'sub', parameters: {} });
    const parsed = JSON.parse(new TextDecoder().decode(other)) as Record<string, string>;
    expect(parsed['organizationId']).toBe('sub');
    expect(parsed['timestampMs']).toMatch(/^[0-9]{13}$/);
  });

  it('POSTs the exact body with a stamp over it and returns the parsed activity', async () => {
    answers.set('/public/v1/submit/sign_raw_payloads', { status: 200, body: JSON.stringify(activityJson) });
    const stamper = newStamper();
    const transport = httpTransport(baseUrl);
    try {
      const client = clientFor(transport, stamper);
      const body = client.buildActivityBody({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', parameters: {} });
      const activity = await client.submit('sign_raw_payloads', body);
      expect(activity).toEqual({
        id: 'act-1',
        organizationId: ORG,
        status: 'ACTIVITY_STATUS_COMPLETED',
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
        fingerprint: 'sha256:00',
        result: { signRawPayloadsResult: { signatures: [] } },
        failure: undefined,
      });
      const got = received.at(-1)!;
      expect(got.path).toBe('/public/v1/submit/sign_raw_payloads');
      expect(got.headers['content-type']).toBe('application/json');
      expect(Buffer.compare(got.body, Buffer.from(body))).toBe(0);
      const stamp = JSON.parse(Buffer.from(String(got.headers['x-stamp']), 'base64url').toString()) as {
        publicKey: string;
        signature: string;
      };
      const spki = Buffer.concat([
        Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex'),
        Buffer.from(stamp.publicKey, 'hex'),
      ]);
      const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
      expect(
        verify('sha256', got.body, { key, dsaEncoding: 'der' }, Buffer.from(stamp.signature, 'hex')),
      ).toBe(true);
    } finally {
      await transport.close();
    }
  });

  it('sends queries with the default organization and returns the body', async () => {
    answers.set('/public/v1/query/get_private_key', {
      status: 200,
      body: '{"privateKey":{"privateKeyId":"k"}}',
    });
    const transport = httpTransport(`${baseUrl}/`);
    try {
      const out = await clientFor(transport).query<{ privateKey: { privateKeyId: string } }>(
        'get_private_key',
        {
          privateKeyId: 'k',
        },
      );
      expect(out.privateKey.privateKeyId).toBe('k');
      expect(JSON.parse(received.at(-1)!.body.toString())).toEqual({
        organizationId: ORG,
        privateKeyId: 'k',
      });
    } finally {
      await transport.close();
    }
  });

  const errorCases: { name: string; status: number; body: string; code: string; message: string }[] = [
    {
      name: 'uses countersignErrorCode from the details when it is a known code',
      status: 403,
      body: JSON.stringify({
        code: 7,
        message: 'policy engine denied request explicitly',
        details: [
          { '@type': 'x', turnkeyErrorCode: 'REQUEST_NOT_AUTHORIZED', countersignErrorCode: 'POLICY_DENIED' },
        ],
      }),
      code: 'POLICY_DENIED',
      message: 'policy engine denied request explicitly',
    },
    {
      name: 'ignores an unknown countersignErrorCode and maps the gRPC code',
      status: 400,
      body: JSON.stringify({ code: 3, message: 'bad', details: [{ countersignErrorCode: 'NOT_A_CODE' }] }),
      code: 'UPSTREAM_INVALID_ARGUMENT',
      message: 'bad',
    },
    {
      name: 'maps code 5 to UPSTREAM_NOT_FOUND',
      status: 404,
      body: '{"code":5,"message":"Could not find any resource to sign with","details":[]}',
      code: 'UPSTREAM_NOT_FOUND',
      message: 'Could not find any resource to sign with',
    },
    {
      name: 'maps code 7 to UPSTREAM_PERMISSION_DENIED',
      status: 403,
      body: '{"code":7,"message":"denied","details":[]}',
      code: 'UPSTREAM_PERMISSION_DENIED',
      message: 'denied',
    },
    {
      name: 'maps code 16 to UPSTREAM_UNAUTHENTICATED',
      status: 401,
      body: '{"code":16,"message":"could not verify api key signature","details":null}',
      code: 'UPSTREAM_UNAUTHENTICATED',
      message: 'could not verify api key signature',
    },
    {
      name: 'maps any other code to UPSTREAM_ERROR keeping the message',
      status: 500,
      body: '{"code":13,"message":"internal server error (abc)","details":[]}',
      code: 'UPSTREAM_ERROR',
      message: 'internal server error (abc)',
    },
    {
      name: 'maps a non-JSON 503 to UPSTREAM_UNAVAILABLE',
      status: 503,
      body: '<html>busy</html>',
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'public API answered HTTP 503',
    },
  ];

  for (const c of errorCases) {
    it(`error mapping: ${c.name}`, async () => {
      answers.set('/public/v1/submit/case', { status: c.status, body: c.body });
      const transport = httpTransport(baseUrl);
      try {
        const client = clientFor(transport);
        const err = await client.submit('case', client.buildActivityBody({ type: 'T', parameters: {} })).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(CountersignError);
        expect((err as CountersignError).code).toBe(c.code);
        expect((err as CountersignError).message).toBe(c.message);
      } finally {
        await transport.close();
      }
    });
  }

  it('refuses a 2xx answer that is not an activity with UPSTREAM_ERROR', async () => {
    answers.set('/public/v1/submit/bad_shape', {
      status: 200,
      body: '{"activity":{"id":"x","status":"WEIRD"}}',
    });
    const transport = httpTransport(baseUrl);
    try {
      const client = clientFor(transport);
      await expect(
        client.submit('bad_shape', client.buildActivityBody({ type: 'T', parameters: {} })),
      ).rejects.toMatchObject({
        code: 'UPSTREAM_ERROR',
      });
    } finally {
      await transport.close();
    }
  });

  it('reports a refused connection as UPSTREAM_UNAVAILABLE', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const transport = httpTransport(`http://127.0.0.1:${port}`);
    try {
      const client = clientFor(transport);
      await expect(
        client.submit('x', client.buildActivityBody({ type: 'T', parameters: {} })),
      ).rejects.toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
      });
    } finally {
      await transport.close();
    }
  });

  it('rejects a base URL that is not http(s) with CONFIG_INVALID', () => {
    expect(() => httpTransport('ftp://example.com')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
    expect(() => httpTransport('not a url')).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
