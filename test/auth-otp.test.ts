/**
 * Email OTP end to end (issue 13) against the real service on SQLite, with a real SMTP server
 * (smtp-server on an ephemeral loopback port) receiving the code: init_otp → the mail → verify_otp
 * with @turnkey/crypto's encryptOtpCodeToBundle → otp_login with a client signature → a session
 * @turnkey/crypto's verifySessionJwtSignature accepts with our notarizer key. Then the abuse rules
 * (5 wrong codes burn an OTP, expiry, single-use tokens, another contact's token, another key's
 * signature, the live-OTP cap) write no session, and nothing secret reaches the logs. Also the
 * proxy configuration activities and the proxy key's policy.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import {
  encryptOtpCodeToBundle,
  verifyOtpVerificationToken,
  verifySessionJwtSignature,
} from '@turnkey/crypto';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import { KeyVault, loadOrCreateMasterKey } from '../src/service/keys/index.js';
import { codeHash } from '../src/service/activities/otp.js';
import { proxyKeyAad } from '../src/service/activities/authProxy.js';

let h: EmbeddedHarness;
let smtp: SmtpSink;
const logLines: string[] = [];
let keys: Record<string, string>;
let org: string;
const secretsSeen: string[] = [];

const submit = (path: string, type: string, parameters: unknown, signer?: ApiKeyPair, orgId = org) =>
  post(h.baseUrl, h.service.credentials, `/public/v1/submit/${path}`, envelope(type, orgId, parameters), {
    ...(signer === undefined ? {} : { keys: signer }),
  });
const result = (r: { json: Record<string, unknown> }, key: string) =>
  ((r.json.activity as { result: Record<string, Record<string, string>> }).result[key] ?? {}) as Record<
    string,
    string
  >;

async function initOtp(contact: string): Promise<{ otpId: string; bundle: string; code: string }> {
  const r = await submit('init_otp', 'ACTIVITY_TYPE_INIT_OTP_V3', {
    otpType: 'OTP_TYPE_EMAIL',
    contact,
    appName: 'Demo',
  });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const res = result(r, 'initOtpResultV2');
  const text = await smtp.take(contact);
  const code = /code is ([0-9A-Z]+)/.exec(text)?.[1] as string;
  secretsSeen.push(code);
  return { otpId: res.otpId as string, bundle: res.otpEncryptionTargetBundle as string, code };
}

async function verify(otpId: string, bundle: string, code: string, clientPub: string) {
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, bundle, clientPub, keys.signerPublicKey);
  return submit('verify_otp', 'ACTIVITY_TYPE_VERIFY_OTP_V2', { otpId, encryptedOtpBundle });
}

function clientSignature(client: ApiKeyPair, tokenId: string, sessionPub: string) {
  const message = JSON.stringify({ login: { publicKey: sessionPub }, tokenId, type: 'USAGE_TYPE_LOGIN' });
  const digest = createHash('sha256').update(message).digest();
  const sig = p256.sign(digest, Buffer.from(client.apiPrivateKey, 'hex'), {
    prehash: false,
    format: 'compact',
  });
  return {
    publicKey: client.apiPublicKey,
    scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256',
    message,
    signature: Buffer.from(sig).toString('hex'),
  };
}

const tokenId = (t: string) =>
  (JSON.parse(Buffer.from(t.split('.')[1] as string, 'base64url').toString()) as { id: string }).id;

async function subOrgWith(email: string): Promise<{ orgId: string; userId: string }> {
  const r = await submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
    subOrganizationName: `sub ${randomUUID()}`,
    rootUsers: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
    rootQuorumThreshold: 1,
  });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const res = result(r, 'createSubOrganizationResultV8') as unknown as {
    subOrganizationId: string;
    rootUserIds: string[];
  };
  return { orgId: res.subOrganizationId, userId: res.rootUserIds[0] as string };
}

beforeAll(async () => {
  smtp = await startSmtpSink();
  const port = smtp.port;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(chunk.toString('utf8'));
      cb();
    },
  });
  h = await startEmbedded({
    allowPrivateNetwork: true,
    logger: pino({ level: 'debug' }, sink),
    delivery: { smtpUrl: `smtp://127.0.0.1:${port}`, smtpFrom: 'noreply@countersign.test' },
  });
  org = h.service.credentials.organizationId;
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
});

afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

describe('auth proxy configuration', () => {
  it('enable_auth_proxy returns {configId, userId}; get_auth_proxy_config reads it; update keeps left-out fields', async () => {
    const r = await submit('enable_auth_proxy', 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY', {});
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const { configId, userId } = result(r, 'enableAuthProxyResult');
    expect(configId).toMatch(/^[0-9a-f-]{36}$/);
    expect(userId).toMatch(/^[0-9a-f-]{36}$/);
    const u = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      allowedOrigins: ['https://app.example.com'],
      otpLength: 8,
      appName: 'Demo',
    });
    expect(result(u, 'updateAuthProxyConfigResult')).toEqual({ configId });
    const u2 = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      sessionExpirationSeconds: '1200',
    });
    expect(u2.status).toBe(200);
    const q = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/get_auth_proxy_config',
      JSON.stringify({ organizationId: org }),
    );
    expect(q.json.authProxyConfig).toMatchObject({
      configId,
      enabled: true,
      userId,
      allowedOrigins: ['https://app.example.com'],
      otpLength: 8,
      sessionExpirationSeconds: '1200',
      appName: 'Demo',
    });
  });

  it('refuses a partial wildcard origin and an out-of-range OTP length, naming the field', async () => {
    const w = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      allowedOrigins: ['https://*.example.com'],
    });
    expect(w.status).toBe(400);
    expect(String(w.json.message)).toMatch(/parameters\.allowedOrigins\.0.*partial wildcards/);
    const l = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      otpLength: 12,
    });
    expect(l.status).toBe(400);
    expect(String(l.json.message)).toMatch(/parameters\.otpLength/);
  });

  it("the proxy's key may run init_otp but nothing else (its policy); the data dir holds it only sealed", async () => {
    const cfg = await h.service.store.getAuthProxyConfig(org);
    const master = loadOrCreateMasterKey({ dataDir: h.dataDir });
    const vault = new KeyVault(master);
    master.fill(0);
    const secret = vault.open(cfg!.sealedApiKey, proxyKeyAad(org));
    const proxyKey = {
      apiPrivateKey: Buffer.from(secret).toString('hex'),
      apiPublicKey: Buffer.from(p256.getPublicKey(secret, true)).toString('hex'),
    };
    const ok = await submit(
      'init_otp',
      'ACTIVITY_TYPE_INIT_OTP_V3',
      { otpType: 'OTP_TYPE_EMAIL', contact: 'policy@example.com', appName: 'Demo' },
      proxyKey,
    );
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    await smtp.take('policy@example.com');
    const denied = await submit(
      'create_wallet',
      'ACTIVITY_TYPE_CREATE_WALLET',
      { walletName: 'x', accounts: [] },
      proxyKey,
    );
    expect(denied.status).toBe(403);
    // Grep test: neither the hex nor the raw scalar appears in any file of the data dir.
    const hex = proxyKey.apiPrivateKey;
    const raw = Buffer.from(secret);
    const walk = (d: string): string[] =>
      readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
    for (const f of walk(h.dataDir)) {
      const bytes = readFileSync(f);
      expect(bytes.includes(raw), f).toBe(false);
      expect(bytes.toString('latin1').toLowerCase().includes(hex), f).toBe(false);
    }
    secret.fill(0);
  });
});

describe('email OTP end to end', () => {
  it('init_otp mails a code; verify_otp + otp_login return a session verifySessionJwtSignature accepts', async () => {
    const { orgId, userId } = await subOrgWith('alice@example.com');
    const { otpId, bundle, code } = await initOtp('alice@example.com');
    expect(code).toMatch(/^[0-9]{8}$/); // otpLength 8, numeric (the configuration above)
    const client = newApiKey();
    const v = await verify(otpId, bundle, code, client.apiPublicKey);
    expect(v.status, JSON.stringify(v.json)).toBe(200);
    const token = result(v, 'verifyOtpResult').verificationToken as string;
    secretsSeen.push(token);
    const claims = await verifyOtpVerificationToken(token, keys.signerPublicKey);
    expect(claims).toMatchObject({ contact: 'alice@example.com', public_key: client.apiPublicKey });
    const session = newApiKey();
    const l = await submit('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', {
      verificationToken: token,
      publicKey: session.apiPublicKey,
      clientSignature: clientSignature(client, tokenId(token), session.apiPublicKey),
    });
    expect(l.status, JSON.stringify(l.json)).toBe(200);
    const jwt = result(l, 'otpLoginResult').session as string;
    secretsSeen.push(jwt);
    expect(await verifySessionJwtSignature(jwt, keys.notarizerPublicKey)).toBe(true);
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString());
    expect(payload).toMatchObject({
      organization_id: orgId,
      user_id: userId,
      public_key: session.apiPublicKey,
    });
    // The session key stamps for the sub-organization's user.
    const who = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/whoami',
      JSON.stringify({ organizationId: orgId }),
      { keys: session },
    );
    expect(who.json).toMatchObject({ organizationId: orgId, userId });
    // The token is single-use.
    const again = newApiKey();
    const reuse = await submit('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', {
      verificationToken: token,
      publicKey: again.apiPublicKey,
      clientSignature: clientSignature(client, tokenId(token), again.apiPublicKey),
    });
    expect(reuse.status).toBe(400);
    expect(String(reuse.json.message)).toMatch(/already been used/);
    expect((await h.service.store.listApiKeys(userId)).map((k) => k.publicKey)).toEqual([
      session.apiPublicKey,
    ]);
  });
});

describe('OTP abuse rules', () => {
  it('after 5 wrong codes the OTP is burnt and even the right code is refused', async () => {
    const { otpId, bundle, code } = await initOtp('burn@example.com');
    const client = newApiKey();
    const wrong = code === '00000000' ? '11111111' : '00000000';
    for (let i = 0; i < 5; i++) {
      const r = await verify(otpId, bundle, wrong, client.apiPublicKey);
      expect(r.status).toBe(400);
      expect(String(r.json.message)).toMatch(/Invalid OTP code/);
    }
    const right = await verify(otpId, bundle, code, client.apiPublicKey);
    expect(right.status).toBe(400);
    expect(String(right.json.message)).toMatch(/already used or burnt/);
  });

  it('refuses an expired OTP', async () => {
    const id = randomUUID();
    await h.service.store.write(
      async (tx) =>
        await tx.insertOtp({
          id,
          organizationId: org,
          otpType: 'OTP_TYPE_EMAIL',
          contact: 'late@example.com',
          codeHash: codeHash(id, '12345678'),
          attempts: 0,
          expiresAtMs: Date.now() - 1,
          closedAtMs: null,
          createdAtMs: Date.now() - 600_000,
        }),
    );
    const { bundle } = await initOtp('late2@example.com');
    const r = await verify(id, bundle, '12345678', newApiKey().apiPublicKey);
    expect(r.status).toBe(400);
    expect(String(r.json.message)).toMatch(/expired/);
  });

  it('refuses an encrypted bundle whose encappedPublic is off the curve, naming that field', async () => {
    const { otpId } = await initOtp('offcurve@example.com');
    const encryptedOtpBundle = JSON.stringify({
      encappedPublic: `04${'11'.repeat(64)}`,
      ciphertext: '00'.repeat(48),
    });
    const r = await submit('verify_otp', 'ACTIVITY_TYPE_VERIFY_OTP_V2', { otpId, encryptedOtpBundle });
    expect(r.status).toBe(400);
    expect(String(r.json.message)).toBe(
      'parameters.encryptedOtpBundle.encappedPublic: is not a point on the P-256 curve',
    );
  });

  it('refuses a token for another contact and a clientSignature by another key; no session is written', async () => {
    const { userId } = await subOrgWith('carol@example.com');
    // dave has no sub-organization: his (valid) token logs nobody in.
    const d = await initOtp('dave@example.com');
    const dClient = newApiKey();
    const dTok = result(await verify(d.otpId, d.bundle, d.code, dClient.apiPublicKey), 'verifyOtpResult')
      .verificationToken as string;
    const s1 = newApiKey();
    const other = await submit('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', {
      verificationToken: dTok,
      publicKey: s1.apiPublicKey,
      clientSignature: clientSignature(dClient, tokenId(dTok), s1.apiPublicKey),
      organizationId: (await h.service.store.getUser(userId))!.organizationId,
    });
    expect(other.status).toBe(404);
    const c = await initOtp('carol@example.com');
    const cClient = newApiKey();
    const cTok = result(await verify(c.otpId, c.bundle, c.code, cClient.apiPublicKey), 'verifyOtpResult')
      .verificationToken as string;
    const s2 = newApiKey();
    const forged = await submit('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', {
      verificationToken: cTok,
      publicKey: s2.apiPublicKey,
      clientSignature: clientSignature(newApiKey(), tokenId(cTok), s2.apiPublicKey),
    });
    expect(forged.status).toBe(400);
    expect(String(forged.json.message)).toMatch(/clientSignature/);
    expect(await h.service.store.listApiKeys(userId)).toEqual([]);
  });

  it('caps live OTPs per contact (429 with a clear message)', async () => {
    await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      maxLiveOtpsPerContact: 2,
    });
    await initOtp('cap@example.com');
    await initOtp('cap@example.com');
    const r = await submit('init_otp', 'ACTIVITY_TYPE_INIT_OTP_V3', {
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'cap@example.com',
      appName: 'Demo',
    });
    expect(r.status).toBe(429);
    expect(String(r.json.message)).toMatch(/Max number of OTPs have been initiated/);
    await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      maxLiveOtpsPerContact: 10,
    });
  });

  it('refuses SMS OTPs clearly when no SMS provider is configured', async () => {
    const r = await submit('init_otp', 'ACTIVITY_TYPE_INIT_OTP_V3', {
      otpType: 'OTP_TYPE_SMS',
      contact: '+15555550100',
      appName: 'Demo',
    });
    expect(r.status).toBe(400);
    expect(String(r.json.message)).toMatch(/no SMS provider configured/);
  });

  it('the logs never hold an OTP code, a verification token or a session', () => {
    expect(secretsSeen.length).toBeGreaterThan(5);
    const logs = logLines.join('');
    expect(logs).toContain('activity completed');
    for (const s of secretsSeen) expect(logs.includes(s), s.slice(0, 12)).toBe(false);
  });
});
