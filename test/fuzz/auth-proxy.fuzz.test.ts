/**
 * Fuzzing the auth proxy's listener, the one surface an end user's browser reaches without a stamp,
 * under fast-check (fixed seed, bounded runs, a time budget): every endpoint it serves and some it
 * does not, with the config-id header missing, unknown or right, an allowed or another origin,
 * methods other than POST, and bodies that are not JSON, JSON that is not an object, or objects
 * whose members (in both spellings the proxy reads) are drawn from plausible values, wrong types and
 * garbage, in front of the real service with a real SMTP server for the codes. Every request gets a
 * JSON answer: a result, or an error with a code and a message and a 4xx status; never a 5xx, a
 * crash or a hang. The proxy keeps answering afterwards.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthProxyListener } from '../../src/proxy/proxy.js';
import { startEmbedded, type EmbeddedHarness } from '../helpers/embedded.js';
import { rawRequest } from '../helpers/raw-http.js';
import { enableAuthProxy, startProxyOver } from '../helpers/proxy.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.js';

const SEED = 0xa0f1;
const RUNS = 1500;
const BUDGET_MS = 45_000;
/** A request with no answer after this long is a hang (a guard, not a measurement). */
const HANG_MS = 15_000;
const ORIGIN = 'https://app.example.com';

let h: EmbeddedHarness;
let smtp: SmtpSink;
let proxy: AuthProxyListener;
let configId: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startEmbedded({
    allowPrivateNetwork: true,
    delivery: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'noreply@countersign.test' },
  });
  configId = await enableAuthProxy(h, h.service.credentials.organizationId, {
    allowedOrigins: [ORIGIN],
    requestsPerMinutePerAddress: 100_000,
  });
  proxy = await startProxyOver(h.dataDir, h.service);
});

afterAll(async () => {
  await proxy?.close();
  await h?.close();
  await smtp?.close();
});

const send = (method: string, path: string, headers: Record<string, string>, body: string) =>
  rawRequest(`http://${proxy.address}`, method, path, headers, body, HANG_MS);

const PATHS = [
  '/v1/otp_init',
  '/v1/otp_init_v2',
  '/v1/otp_verify',
  '/v1/otp_verify_v2',
  '/v1/otp_login',
  '/v1/otp_login_v2',
  '/v1/wallet_kit_config',
  '/v1/wallet_kit_client_params',
  '/v1/signup',
  '/v1/signup_v2',
  '/v1/account',
  '/v1/oauth_login',
  '/v1/oauth2_authenticate',
];

/** The members the proxy reads, in both spellings. */
const MEMBERS = [
  ['otpType', 'otp_type'],
  ['contact'],
  ['otpId', 'otp_id'],
  ['otpCode', 'otp_code'],
  ['encryptedOtpBundle', 'encrypted_otp_bundle'],
  ['verificationToken', 'verification_token'],
  ['publicKey', 'public_key'],
  ['clientSignature', 'client_signature'],
  ['organizationId', 'organization_id'],
  ['invalidateExisting', 'invalidate_existing'],
  ['oidcToken', 'oidc_token'],
  ['provider'],
  ['authCode', 'auth_code'],
  ['redirectUri', 'redirect_uri'],
  ['codeVerifier', 'code_verifier'],
  ['clientId', 'client_id'],
  ['nonce'],
  ['userEmail', 'user_email'],
  ['userPhoneNumber', 'user_phone_number'],
  ['userName', 'user_name'],
  ['apiKeys'],
  ['authenticators'],
  ['oauthProviders'],
  ['wallet'],
  ['filterType', 'filter_type'],
  ['filterValue', 'filter_value'],
].flat();

const plausible = fc.oneof(
  fc.constantFrom(
    'OTP_TYPE_EMAIL',
    'OTP_TYPE_SMS',
    'user@example.com',
    '+15555550100',
    'EMAIL',
    'PHONE_NUMBER',
    'OIDC_TOKEN',
    'google',
    'https://app.example.com/cb',
    '02' + 'ab'.repeat(32),
    '04' + 'cd'.repeat(64),
    'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  ),
  fc.uuid(),
  fc.string({ maxLength: 60 }),
);
const anyValue = fc.oneof(
  { weight: 4, arbitrary: plausible },
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(plausible, fc.dictionary(fc.constantFrom(...MEMBERS), plausible, { maxKeys: 3 })), {
    maxLength: 3,
  }),
  fc.dictionary(
    fc.constantFrom(...MEMBERS, 'walletName', 'accounts', 'curve'),
    fc.oneof(plausible, fc.integer()),
    {
      maxKeys: 4,
    },
  ),
);

const body = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .dictionary(fc.constantFrom(...MEMBERS), anyValue, { maxKeys: 8 })
      .map((o) => JSON.stringify(o)),
  },
  fc.json({ maxDepth: 2 }),
  fc.constantFrom('', '{', 'null', '[]', '"x"', '{"contact": "a@b.c"', '\u0000'),
  fc.string({ maxLength: 100 }),
);

const requestArb = fc.record({
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant('POST') },
    fc.constantFrom('GET', 'PUT', 'OPTIONS', 'DELETE'),
  ),
  path: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...PATHS) },
    fc.constantFrom('/', '/v1/', '/v1/nope', '/healthz'),
  ),
  config: fc.oneof(
    { weight: 8, arbitrary: fc.constant('right') },
    fc.constantFrom('missing', 'empty', 'unknown'),
  ),
  origin: fc.constantFrom(undefined, ORIGIN, 'https://evil.example'),
  contentType: fc.constantFrom('application/json', 'text/plain', undefined),
  body,
});

describe('auth proxy fuzz', () => {
  it('answers every request with JSON: a result or a 4xx error with a code and a message, never a 5xx', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const headers: Record<string, string> = {};
        if (r.config === 'right') headers['x-auth-proxy-config-id'] = configId;
        else if (r.config === 'empty') headers['x-auth-proxy-config-id'] = '';
        else if (r.config === 'unknown') headers['x-auth-proxy-config-id'] = 'no-such-config';
        if (r.origin !== undefined) headers['origin'] = r.origin;
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        const a = await send(r.method, r.path, headers, r.body);
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        const where = `${r.method} ${r.path} ${JSON.stringify(headers)} ${JSON.stringify(r.body)}: ${a.status} ${a.body}`;
        expect(a.status, where).toBeLessThan(500);
        if (a.status === 204) return;
        const json = JSON.parse(a.body) as Record<string, unknown>;
        if (a.status >= 400) {
          expect(typeof json['message'], where).toBe('string');
          expect(typeof json['code'], where).toBe('number');
        }
      }),
      { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: BUDGET_MS },
    );
    // Some requests got past the checks, and the proxy still answers.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    const after = await send('POST', '/v1/wallet_kit_config', { 'x-auth-proxy-config-id': configId }, '{}');
    expect(after.status).toBe(200);
  }, 120_000);
});
