/**
 * Sign-up and account lookup through the auth proxy (issue 13): email OTP through the proxy with
 * the code read from a real SMTP server's mail, then `/v1/signup_v2` with the client signature
 * @turnkey/core's own getClientSignatureMessageForSignup builds, `/v1/account` finding the new
 * sub-organization, and otp_login into it. The abuse cases: a contact without a token, a reused
 * token, a token for another contact, a signature by another key, the seed's spellings, the shared
 * per-address limit (429) — none writes an organization or a user.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { encryptOtpCodeToBundle, verifySessionJwtSignature } from '@turnkey/crypto';
import { getClientSignatureMessageForSignup } from '@turnkey/core';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import type { AuthProxyListener } from '../src/proxy/proxy.js';
import { enableAuthProxy, startProxyOver } from './helpers/proxy.js';

let h: EmbeddedHarness;
let smtp: SmtpSink;
let proxy: AuthProxyListener;
let configId: string;
let keys: Record<string, string>;
let parent: string;
const logLines: string[] = [];
const secretsSeen: string[] = [];

const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(`http://${proxy.address}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Auth-Proxy-Config-ID': configId, ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
};

const sign = (key: ApiKeyPair, message: string) =>
  Buffer.from(
    p256.sign(createHash('sha256').update(message).digest(), Buffer.from(key.apiPrivateKey, 'hex'), {
      prehash: false,
      format: 'compact',
    }),
  ).toString('hex');

/** otp_init_v2 → the mail → otp_verify_v2, all through the proxy: a token bound to `client`. */
async function verifiedToken(contact: string, client: ApiKeyPair): Promise<string> {
  const init = await call('/v1/otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact });
  expect(init.status, JSON.stringify(init.json)).toBe(200);
  const code = /code is ([0-9A-Z]+)/.exec(await smtp.take(contact))?.[1] as string;
  secretsSeen.push(code);
  const encryptedOtpBundle = await encryptOtpCodeToBundle(
    code,
    init.json.otpEncryptionTargetBundle as string,
    client.apiPublicKey,
    keys.signerPublicKey,
  );
  const v = await call('/v1/otp_verify_v2', { otpId: init.json.otpId, encryptedOtpBundle });
  expect(v.status, JSON.stringify(v.json)).toBe(200);
  secretsSeen.push(v.json.verificationToken as string);
  return v.json.verificationToken as string;
}

function signupBody(email: string, token: string, signer: ApiKeyPair, extra: Record<string, unknown> = {}) {
  const body = {
    userName: email,
    userEmail: email,
    organizationName: `org of ${email}`,
    verificationToken: token,
    apiKeys: [],
    authenticators: [],
    oauthProviders: [],
    ...extra,
  };
  const { message } = getClientSignatureMessageForSignup({
    verificationToken: token,
    email,
    apiKeys: [],
    authenticators: [],
    oauthProviders: [],
  });
  return {
    ...body,
    clientSignature: {
      publicKey: signer.apiPublicKey,
      scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256',
      message,
      signature: sign(signer, message),
    },
  };
}

const subOrgCount = async () =>
  (await h.service.store.listSubOrganizationIds(parent, undefined, { limit: 100 })).length;

beforeAll(async () => {
  smtp = await startSmtpSink();
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(chunk.toString('utf8'));
      cb();
    },
  });
  // Service and proxy log at debug into one capture.
  const logger = pino({ level: 'debug' }, sink);
  h = await startEmbedded({
    allowPrivateNetwork: true,
    logger,
    delivery: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'noreply@countersign.test' },
  });
  parent = h.service.credentials.organizationId;
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
  configId = await enableAuthProxy(h, parent, { requestsPerMinutePerAddress: 40 });
  proxy = await startProxyOver(h.dataDir, h.service, { now: () => 0, logger });
});

afterAll(async () => {
  await proxy?.close();
  await h?.close();
  await smtp?.close();
});

describe('auth proxy: sign-up and account lookup', () => {
  it('signup_v2 with a verified email creates the sub-organization; account finds it; otp_login logs into it', async () => {
    const email = 'newcomer@example.com';
    const none = await call('/v1/account', { filterType: 'EMAIL', filterValue: email });
    expect(none).toEqual({ status: 200, json: {} });
    const client = newApiKey();
    const token = await verifiedToken(email, client);
    const s = await call('/v1/signup_v2', signupBody(email, token, client));
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const { organizationId, userId } = s.json as { organizationId: string; userId: string };
    expect(organizationId).toMatch(/^[0-9a-f-]{36}$/);
    const user = await h.service.store.getUser(userId);
    expect(user).toMatchObject({ organizationId, email, isRoot: true });
    const found = await call('/v1/account', {
      filterType: 'EMAIL',
      filterValue: email,
      verificationToken: token,
    });
    expect(found).toEqual({ status: 200, json: { organizationId } });

    // The token was used by the sign-up: a second sign-up with it is refused.
    const again = await call(
      '/v1/signup_v2',
      signupBody(email, token, client, { organizationName: 'twice' }),
    );
    expect(again.status).toBe(400);
    expect(String(again.json.message)).toMatch(/already been used/);

    // A fresh OTP logs the new user in.
    const client2 = newApiKey();
    const token2 = await verifiedToken(email, client2);
    const tokenId = JSON.parse(Buffer.from(token2.split('.')[1] as string, 'base64url').toString()).id;
    const session = newApiKey();
    const message = JSON.stringify({
      login: { publicKey: session.apiPublicKey },
      tokenId,
      type: 'USAGE_TYPE_LOGIN',
    });
    const l = await call('/v1/otp_login_v2', {
      verificationToken: token2,
      publicKey: session.apiPublicKey,
      clientSignature: {
        publicKey: client2.apiPublicKey,
        scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256',
        message,
        signature: sign(client2, message),
      },
    });
    expect(l.status, JSON.stringify(l.json)).toBe(200);
    const jwt = l.json.session as string;
    secretsSeen.push(jwt);
    expect(await verifySessionJwtSignature(jwt, keys.notarizerPublicKey)).toBe(true);
    expect(JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString())).toMatchObject({
      organization_id: organizationId,
      user_id: userId,
    });
  });

  it('accepts the seed spelling of the wallet ({path, curve: CURVE_TYPE_*}) and returns it', async () => {
    const email = 'seedwallet@example.com';
    const client = newApiKey();
    const token = await verifiedToken(email, client);
    const s = await call(
      '/v1/signup',
      signupBody(email, token, client, {
        wallet: { path: "m/44'/60'/0'/0/0", curve: 'CURVE_TYPE_SECP256K1' },
      }),
    );
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const wallet = s.json.wallet as { walletId: string; addresses: string[] };
    expect(wallet.addresses).toHaveLength(1);
    expect(wallet.addresses[0]).toMatch(/^0x[0-9a-fA-F]{40}$/);
    // The service's app proofs for the derived address come back through the proxy as they are.
    const proofs = s.json.appProofs as { proofPayload: string }[];
    expect(proofs.length).toBeGreaterThan(0);
    const payloads = proofs.map(
      (p) => JSON.parse(p.proofPayload) as { address: string; activityType: string },
    );
    expect(payloads).toContainEqual(
      expect.objectContaining({
        address: wallet.addresses[0],
        activityType: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
      }),
    );
  });

  it('refuses a contact without a token, a token for another contact, and a signature by another key; writes nothing', async () => {
    const before = await subOrgCount();
    const noToken = await call('/v1/signup_v2', {
      userName: 'x',
      userEmail: 'notoken@example.com',
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    });
    expect(noToken.status).toBe(400);
    expect(String(noToken.json.message)).toMatch(/^verificationToken: is required/);

    const client = newApiKey();
    const token = await verifiedToken('owner@example.com', client);
    const other = await call('/v1/signup_v2', signupBody('thief@example.com', token, client));
    expect(other.status).toBe(400);
    expect(String(other.json.message)).toMatch(/verificationToken.*contact/);

    const forged = await call('/v1/signup_v2', signupBody('owner@example.com', token, newApiKey()));
    expect(forged.status).toBe(400);
    expect(String(forged.json.message)).toMatch(/clientSignature/);

    expect(await subOrgCount()).toBe(before);
    const lookup = await call('/v1/account', { filterType: 'EMAIL', filterValue: 'owner@example.com' });
    expect(lookup.json).toEqual({});
    // The token was not burnt by the refusals: its holder can still sign up with it.
    const ok = await call('/v1/signup_v2', signupBody('owner@example.com', token, client));
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
  });

  it('account refuses a missing or unknown filterType with the field named', async () => {
    const missing = await call('/v1/account', { filterValue: 'a@example.com' });
    expect(missing.status).toBe(400);
    expect(String(missing.json.message)).toMatch(/^filterType/);
    const bad = await call('/v1/account', { filterType: 'SHOE_SIZE', filterValue: '9' });
    expect(bad.status).toBe(400);
    expect(String(bad.json.message)).toMatch(/^filterType: must be one of/);
  });

  it('signup shares the per-address limit with otp_init: 429 once it is spent, and nothing is written', async () => {
    const before = await subOrgCount();
    let last = { status: 0, json: {} as Record<string, unknown> };
    for (let i = 0; i < 45 && last.status !== 429; i++)
      last = await call('/v1/signup', {
        userName: `anon ${i}`,
        apiKeys: [],
        authenticators: [],
        oauthProviders: [],
      });
    expect(last.status).toBe(429);
    expect(String(last.json.message)).toMatch(/rate limit exceeded/);
    const after = await subOrgCount();
    const init = await call('/v1/otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'late@example.com' });
    expect(init.status).toBe(429);
    expect(await subOrgCount()).toBe(after);
    expect(after).toBeGreaterThan(before);
  });

  it('the logs (service and proxy) never hold an OTP code, a verification token or a session', () => {
    expect(secretsSeen.length).toBeGreaterThan(5);
    const logs = logLines.join('');
    expect(logs).toContain('activity completed');
    for (const s of secretsSeen) expect(logs.includes(s), s.slice(0, 12)).toBe(false);
  });
});
