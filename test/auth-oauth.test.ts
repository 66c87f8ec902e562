/**
 * OAuth end to end (issue 13) against the real service on SQLite and a real OpenID provider
 * (oidc-provider on an ephemeral loopback port, its own JWKS): sign-up with the provider's OIDC
 * token (create_sub_organization), then oauth_login through the auth proxy, whose session JWT
 * @turnkey/crypto accepts with our notarizer key and whose key stamps requests in the sub-org. A
 * token with the wrong nonce, audience or issuer, or an expired one, is refused with a clear error
 * and writes nothing. oauth2_authenticate runs the PKCE code exchange against the same provider with
 * the client secret stored sealed in the proxy configuration, and its service-issued token signs up
 * and logs in. Also list_suborgs by OIDC_TOKEN and create/delete_oauth_providers.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { verifySessionJwtSignature } from '@turnkey/crypto';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import { startProxyOver } from './helpers/proxy.js';
import { pkcePair, startOidcProvider, type TestOidcProvider } from './helpers/oidc-provider.js';
import type { AuthProxyListener } from '../src/proxy/proxy.js';
import { sealToTurnkeyTarget } from '../src/service/keys/hpke.js';
import { readSettings } from '../src/service/authProxy/settings.js';

let h: EmbeddedHarness;
let idp: TestOidcProvider;
let other: TestOidcProvider;
let proxy: AuthProxyListener;
let org: string;
let configId: string;
let keys: Record<string, string>;
const X_CLIENT = 'app-client';
const logLines: string[] = [];
/** Every token, code, verifier, secret and session a test handled: none may reach the logs. */
const secrets: string[] = [];
const keep = <T>(v: T): T => {
  if (typeof v === 'string' && v.length >= 8) secrets.push(v);
  return v;
};
/** `p` with its flows recording what they return. */
function recording(p: TestOidcProvider): TestOidcProvider {
  return {
    ...p,
    idToken: async (o) => keep(await p.idToken(o)),
    authorize: async (o) => keep(await p.authorize(o)),
    sign: async (c) => keep(await p.sign(c)),
  };
}

const submit = (path: string, type: string, parameters: unknown, signer?: ApiKeyPair, orgId = org) =>
  post(h.baseUrl, h.service.credentials, `/public/v1/submit/${path}`, envelope(type, orgId, parameters), {
    ...(signer === undefined ? {} : { keys: signer }),
  });
const result = (r: { json: Record<string, unknown> }, key: string) =>
  ((r.json.activity as { result: Record<string, unknown> }).result[key] ?? {}) as Record<string, unknown>;
const nonceOf = (pub: string) => createHash('sha256').update(pub).digest('hex');
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;

async function proxyPost(
  path: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  for (const k of ['oidcToken', 'oidc_token', 'authCode', 'codeVerifier']) keep(body[k]);
  const res = await fetch(`http://${proxy.address}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Auth-Proxy-Config-ID': configId },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  keep(json.session);
  keep(json.oidcToken);
  return { status: res.status, json };
}

async function signUp(name: string, providerName: string, oidcToken: string) {
  const r = await submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
    subOrganizationName: `${name} ${randomUUID()}`,
    rootUsers: [
      { userName: name, apiKeys: [], authenticators: [], oauthProviders: [{ providerName, oidcToken }] },
    ],
    rootQuorumThreshold: 1,
  });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const res = result(r, 'createSubOrganizationResultV8') as {
    subOrganizationId: string;
    rootUserIds: string[];
  };
  return { orgId: res.subOrganizationId, userId: res.rootUserIds[0] as string };
}

/** Everything a login could have written: the sub-org's API keys (sessions) and users. */
async function footprint(orgId: string) {
  return {
    keys: (await h.service.store.listApiKeysOfOrganization(orgId)).length,
    users: (await h.service.store.listUsers(orgId)).length,
  };
}

let alice: { orgId: string; userId: string };

async function readSettingsOf() {
  const cfg = await h.service.store.getAuthProxyConfig(org);
  return readSettings(cfg!.settingsJson);
}

beforeAll(async () => {
  idp = recording(await startOidcProvider());
  other = recording(await startOidcProvider());
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(chunk.toString('utf8'));
      cb();
    },
  });
  h = await startEmbedded({ allowPrivateNetwork: true, logger: pino({ level: 'debug' }, sink) });
  keep(idp.clients[0].clientSecret);
  org = h.service.credentials.organizationId;
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
  const en = await submit('enable_auth_proxy', 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY', {});
  expect(en.status, JSON.stringify(en.json)).toBe(200);
  configId = result(en, 'enableAuthProxyResult').configId as string;
  // The client secret travels sealed to the service's TLS-fetcher key, as Turnkey's dashboard does.
  const sealed = sealToTurnkeyTarget({
    targetPublicKey: Buffer.from(keys.tlsFetcherEncryptPublicKey as string, 'hex'),
    plaintext: Buffer.from(idp.clients[0].clientSecret),
  });
  const up = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
    enabledProviders: ['google', 'x'],
    oauthClientIds: { google: idp.clients[0].clientId },
    oauth2Credentials: {
      x: {
        clientId: X_CLIENT,
        tokenUrl: idp.tokenUrl,
        userInfoUrl: idp.userInfoUrl,
        encryptedClientSecret: JSON.stringify({
          encappedPublic: Buffer.from(sealed.encappedPublic).toString('hex'),
          ciphertext: Buffer.from(sealed.ciphertext).toString('hex'),
        }),
      },
    },
  });
  expect(up.status, JSON.stringify(up.json)).toBe(200);
  proxy = await startProxyOver(h.dataDir, h.service);
  const signupKey = newApiKey();
  const token = await idp.idToken({
    clientId: 'app-client',
    sub: 'alice',
    nonce: nonceOf(signupKey.apiPublicKey),
  });
  alice = await signUp('alice', 'google', token);
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await h?.close();
  await idp?.close();
  await other?.close();
});

describe('sign-up and oauth_login with a real OIDC provider', () => {
  it('registers the verified (iss, aud, sub) of the sign-up token', async () => {
    const providers = await h.service.store.listOAuthProviders(alice.userId);
    expect(providers.map((p) => [p.name, p.issuer, p.audience, p.subject])).toEqual([
      ['google', idp.issuer, 'app-client', 'alice'],
    ]);
  });

  it('logs in through the proxy: a session the notarizer key verifies, whose key stamps requests in the sub-org', async () => {
    const session = newApiKey();
    const oidcToken = await idp.idToken({
      clientId: 'app-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
    });
    const r = await proxyPost('/v1/oauth_login', { oidcToken, publicKey: session.apiPublicKey });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const jwt = r.json.session as string;
    expect(await verifySessionJwtSignature(jwt, keys.notarizerPublicKey)).toBe(true);
    expect(claimsOf(jwt)).toMatchObject({
      organization_id: alice.orgId,
      user_id: alice.userId,
      public_key: session.apiPublicKey,
      session_type: 'SESSION_TYPE_READ_WRITE',
    });
    const who = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/whoami',
      JSON.stringify({ organizationId: alice.orgId }),
      { keys: session },
    );
    expect(who.status, JSON.stringify(who.json)).toBe(200);
    expect(who.json.userId).toBe(alice.userId);
  });

  it('accepts the snake_case spelling of the fields too', async () => {
    const session = newApiKey();
    const oidc_token = await idp.idToken({
      clientId: 'app-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
    });
    const r = await proxyPost('/v1/oauth_login', { oidc_token, public_key: session.apiPublicKey });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  });

  it('finds the sub-organization by OIDC token (list_suborgs filterType OIDC_TOKEN)', async () => {
    const filterValue = await idp.idToken({ clientId: 'app-client', sub: 'alice', nonce: 'n' });
    const q = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/list_suborgs',
      JSON.stringify({ organizationId: org, filterType: 'OIDC_TOKEN', filterValue }),
    );
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    expect(q.json.organizationIds).toEqual([alice.orgId]);
    const forged = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/list_suborgs',
      JSON.stringify({
        organizationId: org,
        filterType: 'OIDC_TOKEN',
        filterValue: `${filterValue.slice(0, -4)}AAAA`,
      }),
    );
    expect(forged.status).toBe(400);
    expect(String(forged.json.message)).toMatch(/filterValue: invalid OIDC token/);
  });
});

describe('bad input at the proxy', () => {
  it('names the missing or malformed field, forwarding nothing', async () => {
    const before = await footprint(alice.orgId);
    const none = await proxyPost('/v1/oauth_login', { publicKey: newApiKey().apiPublicKey });
    expect(none.status).toBe(400);
    expect(String(none.json.message)).toMatch(/^oidcToken: is required/);
    const badKey = await proxyPost('/v1/oauth_login', { oidcToken: 'a.b.c', publicKey: 'zz' });
    expect(badKey.status).toBe(400);
    expect(String(badKey.json.message)).toMatch(
      /parameters\.publicKey: must be a compressed P-256 public key/,
    );
    const notJwt = await proxyPost('/v1/oauth_login', {
      oidcToken: 'not-a-jwt',
      publicKey: newApiKey().apiPublicKey,
    });
    expect(notJwt.status).toBe(400);
    expect(String(notJwt.json.message)).toMatch(/parameters\.oidcToken: invalid OIDC token: is not a JWT/);
    const verifier = await proxyPost('/v1/oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_X',
      authCode: 'c',
      redirectUri: idp.redirectUri,
      codeVerifier: 'short',
      nonce: nonceOf('k'),
      clientId: X_CLIENT,
    });
    expect(verifier.status).toBe(400);
    expect(String(verifier.json.message)).toMatch(/parameters\.codeVerifier: must be a PKCE code verifier/);
    expect(await footprint(alice.orgId)).toEqual(before);
  });
});

describe('the recorded activity', () => {
  it("carries Turnkey's intent and result keys, with the OIDC token sealed in the intent", async () => {
    const session = newApiKey();
    const oidcToken = await idp.idToken({
      clientId: 'app-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
    });
    const r = await submit('oauth_login', 'ACTIVITY_TYPE_OAUTH_LOGIN', {
      oidcToken,
      publicKey: session.apiPublicKey,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const activity = r.json.activity as Record<string, Record<string, Record<string, unknown>>>;
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(activity.type).toBe('ACTIVITY_TYPE_OAUTH_LOGIN');
    expect(String(activity.intent?.oauthLoginIntent?.oidcToken)).toMatch(/^countersign-sealed:/);
    expect(typeof activity.result?.oauthLoginResult?.session).toBe('string');
    const stored = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/get_activity',
      JSON.stringify({ organizationId: org, activityId: activity.id }),
    );
    expect(stored.status, JSON.stringify(stored.json)).toBe(200);
    expect(JSON.stringify(stored.json)).not.toContain(oidcToken);
  });
});

describe('refused tokens write no session and no user', () => {
  const refuse = async (oidcToken: string, publicKey: string, status: number, message: RegExp) => {
    const before = await footprint(alice.orgId);
    const r = await proxyPost('/v1/oauth_login', { oidcToken, publicKey });
    expect(r.status, JSON.stringify(r.json)).toBe(status);
    expect(String(r.json.message)).toMatch(message);
    expect(await footprint(alice.orgId)).toEqual(before);
  };

  it('a token whose nonce is not sha256 of the session key', async () => {
    const session = newApiKey();
    const token = await idp.idToken({
      clientId: 'app-client',
      sub: 'alice',
      nonce: nonceOf(newApiKey().apiPublicKey),
    });
    await refuse(
      token,
      session.apiPublicKey,
      400,
      /parameters\.oidcToken: invalid OIDC token: the 'nonce' claim/,
    );
  });

  it('a token for another client id (audience)', async () => {
    const session = newApiKey();
    const token = await idp.idToken({
      clientId: 'other-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
    });
    await refuse(
      token,
      session.apiPublicKey,
      400,
      /invalid OIDC token: the 'aud' claim is not one of the OAuth client ids/,
    );
  });

  it('a token of another issuer, valid there, for the same client id and subject', async () => {
    const session = newApiKey();
    const token = await other.idToken({
      clientId: 'app-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
    });
    await refuse(
      token,
      session.apiPublicKey,
      404,
      /no user .* has an OAuth provider with this token's issuer/,
    );
  });

  it("a token claiming the provider's issuer but signed by another provider's key", async () => {
    const session = newApiKey();
    const real = await other.idToken({
      clientId: 'app-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
    });
    const forged = await other.sign({ ...claimsOf(real), iss: idp.issuer });
    await refuse(
      forged,
      session.apiPublicKey,
      400,
      /invalid OIDC token: the token is signed with a key .* the issuer does not publish/,
    );
  });

  it('an expired token (signed by the provider itself)', async () => {
    const session = newApiKey();
    const now = Math.floor(Date.now() / 1000);
    const token = await idp.sign({
      iss: idp.issuer,
      aud: 'app-client',
      sub: 'alice',
      nonce: nonceOf(session.apiPublicKey),
      iat: now - 7200,
      exp: now - 3600,
    });
    await refuse(token, session.apiPublicKey, 400, /invalid OIDC token: the token has expired/);
  });

  it('sign-up with a token of an unconfigured client id creates no sub-organization', async () => {
    const before = (await h.service.store.listSubOrganizationIds(org, undefined, { limit: 1000 })).length;
    const token = await idp.idToken({ clientId: 'other-client', sub: 'mallory', nonce: 'n' });
    const r = await submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
      subOrganizationName: `mallory ${randomUUID()}`,
      rootUsers: [
        {
          userName: 'm',
          apiKeys: [],
          authenticators: [],
          oauthProviders: [{ providerName: 'google', oidcToken: token }],
        },
      ],
      rootQuorumThreshold: 1,
    });
    expect(r.status).toBe(400);
    expect(String(r.json.message)).toMatch(
      /parameters\.rootUsers\.0\.oauthProviders\.0\.oidcToken: invalid OIDC token/,
    );
    expect((await h.service.store.listSubOrganizationIds(org, undefined, { limit: 1000 })).length).toBe(
      before,
    );
  });
});

describe('oauth2_authenticate (PKCE) against the same provider', () => {
  it('exchanges the code with the stored secret; the service-issued token signs up and logs in', async () => {
    const session = newApiKey();
    const nonce = nonceOf(session.apiPublicKey);
    const { verifier, challenge } = pkcePair();
    const authCode = await idp.authorize({ clientId: X_CLIENT, sub: 'bob', nonce, codeChallenge: challenge });
    const r = await proxyPost('/v1/oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_X',
      authCode,
      redirectUri: idp.redirectUri,
      codeVerifier: verifier,
      nonce,
      clientId: X_CLIENT,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const oidcToken = r.json.oidcToken as string;
    expect(claimsOf(oidcToken)).toMatchObject({
      iss: 'urn:countersign:oauth2',
      aud: X_CLIENT,
      sub: 'x:bob',
      nonce,
    });
    // Its signature is the service signer key's (published at /public/v1/discovery/keys).
    const [h64, p64, s64] = oidcToken.split('.') as [string, string, string];
    const digest = createHash('sha256').update(`${h64}.${p64}`).digest();
    expect(
      p256.verify(Buffer.from(s64, 'base64url'), digest, Buffer.from(keys.signerPublicKey as string, 'hex'), {
        prehash: false,
        format: 'compact',
      }),
    ).toBe(true);

    const bob = await signUp('bob', 'x', oidcToken);
    const login = await proxyPost('/v1/oauth_login', { oidcToken, publicKey: session.apiPublicKey });
    expect(login.status, JSON.stringify(login.json)).toBe(200);
    expect(claimsOf(login.json.session as string)).toMatchObject({
      organization_id: bob.orgId,
      user_id: bob.userId,
    });
  });

  it('a wrong code verifier is refused by the provider, and the refusal names the field', async () => {
    const session = newApiKey();
    const nonce = nonceOf(session.apiPublicKey);
    const { challenge } = pkcePair();
    const authCode = await idp.authorize({
      clientId: X_CLIENT,
      sub: 'carol',
      nonce,
      codeChallenge: challenge,
    });
    const r = await proxyPost('/v1/oauth2_authenticate', {
      provider: 'OAUTH2_PROVIDER_X',
      authCode,
      redirectUri: idp.redirectUri,
      codeVerifier: pkcePair().verifier,
      nonce,
      clientId: X_CLIENT,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(String(r.json.message)).toMatch(
      /parameters\.authCode: the provider's token endpoint refused: HTTP 400 invalid_grant/,
    );
  });

  it('an unconfigured provider or another client id is refused before anything is dialled', async () => {
    const base = {
      authCode: 'c',
      redirectUri: idp.redirectUri,
      codeVerifier: pkcePair().verifier,
      nonce: nonceOf('k'),
    };
    const d = await proxyPost('/v1/oauth2_authenticate', {
      ...base,
      provider: 'OAUTH2_PROVIDER_DISCORD',
      clientId: X_CLIENT,
    });
    expect(d.status).toBe(400);
    expect(String(d.json.message)).toMatch(/parameters\.provider: OAUTH2_PROVIDER_NOT_CONFIGURED/);
    const c = await proxyPost('/v1/oauth2_authenticate', {
      ...base,
      provider: 'OAUTH2_PROVIDER_X',
      clientId: 'nope',
    });
    expect(c.status).toBe(400);
    expect(String(c.json.message)).toMatch(/parameters\.clientId: is not the client id configured/);
  });
});

describe('the outbound guard on OAuth 2.0 endpoints', () => {
  it('refuses a link-local token endpoint (cloud metadata) even with --allow-private-network, naming the setting', async () => {
    const current = readSettingsOf();
    const up = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      oauth2Credentials: {
        ...(await current).oauth2Credentials,
        discord: {
          clientId: 'discord-client',
          tokenUrl: 'http://169.254.169.254/token',
          userInfoUrl: 'http://169.254.169.254/me',
          encryptedClientSecret: (await current).oauth2Credentials.x?.encryptedClientSecret,
        },
      },
    });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const r = await proxyPost('/v1/oauth2_authenticate', {
      provider: 'discord',
      authCode: 'code-that-goes-nowhere',
      redirectUri: idp.redirectUri,
      codeVerifier: pkcePair().verifier,
      nonce: nonceOf('k'),
      clientId: 'discord-client',
    });
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(String(r.json.message)).toMatch(
      /oauth2Credentials\.discord\.tokenUrl: points to a link-local address, which is never dialled/,
    );
  });
});

describe('create_oauth_providers / delete_oauth_providers', () => {
  it('a logged-in user adds a second provider (verified token), logs in with it, and removes it', async () => {
    const session = newApiKey();
    const login = await proxyPost('/v1/oauth_login', {
      oidcToken: await idp.idToken({
        clientId: 'app-client',
        sub: 'alice',
        nonce: nonceOf(session.apiPublicKey),
      }),
      publicKey: session.apiPublicKey,
    });
    expect(login.status).toBe(200);
    const otherToken = await other.idToken({ clientId: 'app-client', sub: 'alice-2', nonce: 'n' });
    const c = await submit(
      'create_oauth_providers',
      'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2',
      { userId: alice.userId, oauthProviders: [{ providerName: 'other', oidcToken: otherToken }] },
      session,
      alice.orgId,
    );
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    const providerIds = result(c, 'createOauthProvidersResultV2').providerIds as string[];
    expect(providerIds).toHaveLength(1);
    const dup = await submit(
      'create_oauth_providers',
      'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2',
      { userId: alice.userId, oauthProviders: [{ providerName: 'other', oidcToken: otherToken }] },
      session,
      alice.orgId,
    );
    expect(dup.status).toBe(400);
    expect(String(dup.json.message)).toMatch(/OAUTH_PROVIDER_ALREADY_EXISTS/);

    const s2 = newApiKey();
    const viaOther = async (pub: string) =>
      proxyPost('/v1/oauth_login', {
        oidcToken: await other.idToken({ clientId: 'app-client', sub: 'alice-2', nonce: nonceOf(pub) }),
        publicKey: pub,
      });
    const ok = await viaOther(s2.apiPublicKey);
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(claimsOf(ok.json.session as string).user_id).toBe(alice.userId);

    const d = await submit(
      'delete_oauth_providers',
      'ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS',
      { userId: alice.userId, providerIds },
      session,
      alice.orgId,
    );
    expect(d.status, JSON.stringify(d.json)).toBe(200);
    expect(result(d, 'deleteOauthProvidersResult').providerIds).toEqual(providerIds);
    const gone = await viaOther(newApiKey().apiPublicKey);
    expect(gone.status).toBe(404);
    const again = await submit(
      'delete_oauth_providers',
      'ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS',
      { userId: alice.userId, providerIds },
      session,
      alice.orgId,
    );
    expect(again.status).toBe(404);
    expect(String(again.json.message)).toMatch(/parameters\.providerIds\.0/);
  });
});

describe('logs', () => {
  it('hold no OIDC token, auth code, code verifier, client secret or session', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(secrets.length).toBeGreaterThan(20);
    const all = logLines.join('');
    for (const v of secrets) expect(all.includes(v), 'a secret reached the logs').toBe(false);
  });
});
