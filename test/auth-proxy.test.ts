/**
 * The auth proxy listener (issue 13) on an ephemeral loopback port, in front of the real service
 * (forwarding through src/client's in-process transport): the config-id header in any case, the
 * origin allowlist with CORS, email OTP sign-in end to end through the proxy with the code read
 * from a real SMTP server's mail, and the per-address rate limit (429).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { encryptOtpCodeToBundle, verifySessionJwtSignature } from '@turnkey/crypto';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { newApiKey } from './helpers/api-key.js';
import type { AuthProxyListener } from '../src/proxy/proxy.js';
import { enableAuthProxy, startProxyOver } from './helpers/proxy.js';

let h: EmbeddedHarness;
let smtp: SmtpSink;
let proxy: AuthProxyListener;
let configId: string;
let keys: Record<string, string>;

const call = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`http://${proxy.address}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Auth-Proxy-Config-ID': configId, ...headers },
    body: JSON.stringify(body),
  });

const submit = (path: string, type: string, parameters: unknown) =>
  post(
    h.baseUrl,
    h.service.credentials,
    `/public/v1/submit/${path}`,
    envelope(type, h.service.credentials.organizationId, parameters),
  );

beforeAll(async () => {
  smtp = await startSmtpSink();
  const port = smtp.port;
  h = await startEmbedded({
    allowPrivateNetwork: true,
    delivery: { smtpUrl: `smtp://127.0.0.1:${port}`, smtpFrom: 'noreply@countersign.test' },
  });
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
  configId = await enableAuthProxy(h, h.service.credentials.organizationId, {
    allowedOrigins: ['https://app.example.com'],
    requestsPerMinutePerAddress: 4,
  });
  // One fixed minute: the rate-limit test must not straddle a window boundary.
  proxy = await startProxyOver(h.dataDir, h.service, { now: () => 0 });
});

afterAll(async () => {
  await proxy?.close();
  await h?.close();
  await smtp?.close();
});

describe('auth proxy: config id and origins', () => {
  it('a missing or unknown config id gets a clear 4xx', async () => {
    const none = await fetch(`http://${proxy.address}/v1/wallet_kit_config`, { method: 'POST' });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { message: string }).message).toMatch(/X-Auth-Proxy-Config-Id/);
    const unknown = await call('/v1/wallet_kit_config', {}, { 'x-auth-proxy-config-id': 'nope' });
    expect(unknown.status).toBe(404);
  });

  it('an allowed origin gets CORS headers (preflight too); another origin gets 403', async () => {
    const ok = await call('/v1/wallet_kit_config', {}, { origin: 'https://app.example.com' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(await ok.json()).toMatchObject({
      organizationId: h.service.credentials.organizationId,
      sessionExpirationSeconds: '900',
    });
    const pre = await fetch(`http://${proxy.address}/v1/otp_init`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'x-auth-proxy-config-id': configId },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/x-auth-proxy-config-id/);
    const bad = await call(
      '/v1/otp_init',
      { otpType: 'OTP_TYPE_EMAIL', contact: 'x@example.com' },
      {
        origin: 'https://evil.example.com',
      },
    );
    expect(bad.status).toBe(403);
    expect(bad.headers.get('access-control-allow-origin')).toBeNull();
    expect(smtp.mails.find((m) => m.to === 'x@example.com')).toBeUndefined();
  });

  it('`*` allows every origin; back on the list, an unlisted origin is refused again', async () => {
    const star = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      allowedOrigins: ['*'],
    });
    expect(star.status).toBe(200);
    const any = await call('/v1/wallet_kit_config', {}, { origin: 'https://anything.example.org' });
    expect(any.status).toBe(200);
    expect(any.headers.get('access-control-allow-origin')).toBe('*');
    const back = await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
      allowedOrigins: ['https://app.example.com'],
    });
    expect(back.status).toBe(200);
    const refused = await call('/v1/wallet_kit_config', {}, { origin: 'https://anything.example.org' });
    expect(refused.status).toBe(403);
  });
});

/**
 * A sub-organization user with `email`, then otp_init_v2 → the mailed code → otp_verify_v2 through
 * the proxy: the verification token and the client key it was issued to.
 */
async function verifiedContact(
  userName: string,
  email: string,
): Promise<{ verificationToken: string; client: ReturnType<typeof newApiKey> }> {
  const sub = await submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
    subOrganizationName: `${userName}'s organization`,
    rootUsers: [{ userName, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
    rootQuorumThreshold: 1,
  });
  expect(sub.status).toBe(200);
  const init = await call('/v1/otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: email });
  expect(init.status).toBe(200);
  const { otpId, otpEncryptionTargetBundle } = (await init.json()) as Record<string, string>;
  const code = /code is ([0-9A-Z]+)/.exec(await smtp.take(email))?.[1] as string;
  const client = newApiKey();
  const encryptedOtpBundle = await encryptOtpCodeToBundle(
    code,
    otpEncryptionTargetBundle as string,
    client.apiPublicKey,
    keys.signerPublicKey,
  );
  const v = await call('/v1/otp_verify_v2', { otpId, encryptedOtpBundle });
  expect(v.status).toBe(200);
  const { verificationToken } = (await v.json()) as { verificationToken: string };
  return { verificationToken, client };
}

describe('auth proxy: email OTP through the proxy', () => {
  it('otp_init_v2 → mail → otp_verify_v2 → otp_login_v2 gives a session for the sub-organization user', async () => {
    const { verificationToken, client } = await verifiedContact('erin', 'erin@example.com');
    const tokenId = JSON.parse(
      Buffer.from(verificationToken.split('.')[1] as string, 'base64url').toString(),
    ).id;
    const session = newApiKey();
    const message = JSON.stringify({
      login: { publicKey: session.apiPublicKey },
      tokenId,
      type: 'USAGE_TYPE_LOGIN',
    });
    const sig = p256.sign(
      createHash('sha256').update(message).digest(),
      Buffer.from(client.apiPrivateKey, 'hex'),
      {
        prehash: false,
        format: 'compact',
      },
    );
    const l = await call('/v1/otp_login_v2', {
      verificationToken,
      publicKey: session.apiPublicKey,
      clientSignature: {
        publicKey: client.apiPublicKey,
        scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256',
        message,
        signature: Buffer.from(sig).toString('hex'),
      },
    });
    expect(l.status).toBe(200);
    const jwt = ((await l.json()) as { session: string }).session;
    expect(await verifySessionJwtSignature(jwt, keys.notarizerPublicKey)).toBe(true);
  });

  it("accepts the seed's spelling: /v1/otp_login with public_key and client_signature as a hex signature over the token", async () => {
    const { verificationToken, client } = await verifiedContact('sam', 'sam@example.com');
    const signToken = (priv: string) =>
      Buffer.from(
        p256.sign(createHash('sha256').update(verificationToken).digest(), Buffer.from(priv, 'hex'), {
          prehash: false,
          format: 'compact',
        }),
      ).toString('hex');
    const session = newApiKey();
    // A signature over the token by another key is refused, and writes nothing.
    const forged = await call('/v1/otp_login', {
      verificationToken,
      public_key: session.apiPublicKey,
      client_signature: signToken(newApiKey().apiPrivateKey),
    });
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { message: string }).message).toMatch(/clientSignature\.signature/);
    const l = await call('/v1/otp_login', {
      verificationToken,
      public_key: session.apiPublicKey,
      client_signature: signToken(client.apiPrivateKey),
    });
    expect(l.status).toBe(200);
    const jwt = ((await l.json()) as { session: string }).session;
    expect(await verifySessionJwtSignature(jwt, keys.notarizerPublicKey)).toBe(true);
  });

  it('rate-limits otp_init per client address with 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await call('/v1/otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: `r${i}@example.com` })).status,
      );
    expect(statuses).toContain(429);
    const last = await call('/v1/otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'r9@example.com' });
    expect(last.status).toBe(429);
    expect(((await last.json()) as { message: string }).message).toMatch(/rate limit exceeded/);
  });
});
