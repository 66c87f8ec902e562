import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { OidcVerifier } from './oidc.js';

/** A minimal issuer on loopback: discovery + JWKS, with the published keys swappable and fetches counted. */
let server: Server;
let issuer: string;
let published: JWK[] = [];
let discoveryIssuer: string | undefined;
const fetches = { discovery: 0, jwks: 0 };
const key1 = await generateKeyPair('ES256', { extractable: true });
const key2 = await generateKeyPair('ES256', { extractable: true });
const jwk = async (k: CryptoKey, kid: string): Promise<JWK> => ({
  ...(await exportJWK(k)),
  kid,
  alg: 'ES256',
});

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') {
      fetches.discovery++;
      res.end(JSON.stringify({ issuer: discoveryIssuer ?? issuer, jwks_uri: `${issuer}/jwks` }));
    } else if (req.url === '/jwks') {
      fetches.jwks++;
      res.end(JSON.stringify({ keys: published }));
    } else res.writeHead(404).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const NONCE = 'ab'.repeat(32);
const token = (key: CryptoKey, kid: string, claims: Record<string, unknown> = {}) =>
  new SignJWT({ iss: issuer, aud: 'client-1', sub: 'user-1', nonce: NONCE, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key);
const input = (t: string) => ({
  token: t,
  field: 'parameters.oidcToken',
  audiences: ['client-1'],
  nonce: NONCE,
  nowMs: Date.now(),
});

describe('OidcVerifier', () => {
  it('verifies through discovery, caches the JWKS, and refetches on an unknown kid only once the throttle allows', async () => {
    published = [await jwk(key1.publicKey, 'k1')];
    let clock = 1_000_000;
    const v = new OidcVerifier({
      policy: { allowPrivateNetwork: true },
      refreshIntervalMs: 60_000,
      now: () => clock,
    });
    const claims = await v.verify(input(await token(key1.privateKey, 'k1')));
    expect(claims).toEqual({ issuer, audience: 'client-1', subject: 'user-1' });
    expect(fetches).toEqual({ discovery: 1, jwks: 1 });
    await v.verify(input(await token(key1.privateKey, 'k1')));
    expect(fetches.jwks).toBe(1);

    // The issuer rotates to k2. Within the throttle window a k2 token is refused without a fetch.
    published = [await jwk(key2.publicKey, 'k2')];
    const k2 = await token(key2.privateKey, 'k2');
    await expect(v.verify(input(k2))).rejects.toThrow(
      /signed with a key \(kid k2\) the issuer does not publish/,
    );
    expect(fetches.jwks).toBe(1);
    clock += 60_000;
    expect(await v.verify(input(k2))).toMatchObject({ subject: 'user-1' });
    expect(fetches.jwks).toBe(2);
  });

  it('refuses, naming the check: wrong nonce, audience, expiry, signature, alg none, discovery naming another issuer', async () => {
    published = [await jwk(key1.publicKey, 'k1')];
    const v = new OidcVerifier({ policy: { allowPrivateNetwork: true } });
    await expect(
      v.verify({ ...input(await token(key1.privateKey, 'k1')), nonce: 'cd'.repeat(32) }),
    ).rejects.toThrow(/parameters\.oidcToken: invalid OIDC token: the 'nonce' claim/);
    await expect(v.verify(input(await token(key1.privateKey, 'k1', { aud: 'client-2' })))).rejects.toThrow(
      /'aud' claim/,
    );
    await expect(
      v.verify({ ...input(await token(key1.privateKey, 'k1')), nowMs: Date.now() + 3_600_000 }),
    ).rejects.toThrow(/has expired/);
    await expect(v.verify(input(await token(key2.privateKey, 'k1')))).rejects.toThrow(
      /signature does not verify/,
    );
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none' })}.${b64({ iss: issuer, aud: 'client-1', sub: 's', exp: 2e9 })}.`;
    await expect(v.verify(input(none))).rejects.toThrow(/invalid OIDC token/);
    await expect(v.verify({ ...input(await token(key1.privateKey, 'k1')), audiences: [] })).rejects.toThrow(
      /no OAuth client ids are configured/,
    );
    discoveryIssuer = 'https://someone-else.example';
    const fresh = new OidcVerifier({ policy: { allowPrivateNetwork: true } });
    await expect(fresh.verify(input(await token(key1.privateKey, 'k1')))).rejects.toThrow(
      /discovery document names another issuer/,
    );
    discoveryIssuer = undefined;
  });

  it('the outbound guard refuses an http or private issuer before any socket is opened', async () => {
    let sockets = 0;
    const createConnection = (): Socket => {
      sockets++;
      throw new Error('no socket may be opened');
    };
    const strict = new OidcVerifier({
      policy: { allowPrivateNetwork: false },
      createConnection,
      resolve: async () => [{ address: '10.1.2.3', family: 4 }],
    });
    const forIssuer = (iss: string) => token(key1.privateKey, 'k1', { iss });
    await expect(strict.verify(input(await forIssuer('http://203.0.113.9')))).rejects.toMatchObject({
      code: 'OUTBOUND_URL_REFUSED',
      message: expect.stringMatching(/parameters\.oidcToken\.iss: must be an https URL/),
    });
    await expect(strict.verify(input(await forIssuer('https://127.0.0.1')))).rejects.toMatchObject({
      code: 'OUTBOUND_URL_REFUSED',
    });
    await expect(strict.verify(input(await forIssuer('https://idp.example')))).rejects.toMatchObject({
      code: 'OUTBOUND_URL_REFUSED',
      message: expect.stringMatching(/private address/),
    });
    const relaxed = new OidcVerifier({ policy: { allowPrivateNetwork: true }, createConnection });
    await expect(relaxed.verify(input(await forIssuer('http://169.254.169.254')))).rejects.toMatchObject({
      code: 'OUTBOUND_URL_REFUSED',
    });
    expect(sockets).toBe(0);
  });
});
