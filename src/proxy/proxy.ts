/**
 * The auth proxy (seed 4.2, 5.2; turnkey-api.md 10) on its own listener: per request it requires
 * `X-Auth-Proxy-Config-Id` (any case), looks the configuration up, checks the Origin against the
 * configuration's exact-origin allowlist (CORS preflight included), opens the organization's
 * proxy-scoped API key for this request only, and forwards the matching public-API activity through
 * `src/client` (stamped with that key, so the proxy user's policy binds it). Answers are the seed's
 * response fields, or an rpcStatus error. Rate limits: per client address on otp_init, per contact.
 * Served: otp_init(_v2), otp_verify(_v2), otp_login(_v2), wallet_kit_config, wallet_kit_client_params,
 * signup(_v2) and account (signup.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { PublicApiClient } from '../client/client.js';
import { ApiKeyStamper } from '../client/stamper.js';
import type { Transport } from '../client/transport.js';
import { CountersignError, invalid, isCountersignError, toRpcStatus } from '../shared/errors.js';
import { bytesToHex, zeroize } from '../shared/encoding.js';
import { p256 } from '@noble/curves/nist.js';
import { proxyKeyAad } from '../service/activities/authProxy.js';
import { readSettings, type AuthProxySettings } from '../service/authProxy/settings.js';
import type { KeyVault } from '../service/keys/index.js';
import type { AuthProxyConfigRecord, Store } from '../service/store/types.js';
import { SIGNUP_ROUTES } from './signup.js';
import { OAUTH_ROUTES } from './oauth.js';

export interface AuthProxyOptions {
  readonly host: string;
  readonly port: number;
  readonly store: Store;
  readonly vault: KeyVault;
  /** How the proxy reaches the public API (never the service's internals). */
  readonly transport: Transport;
  readonly logger: Logger;
  /** Test seam for the rate limiter's clock. */
  readonly now?: () => number;
}

export interface AuthProxyListener {
  readonly address: string;
  close(): Promise<void>;
}

export type Body = Record<string, unknown>;
/**
 * Submits one activity in the configuration's organization with the proxy key; its result object
 * (with `appProofs` beside the result key when the activity produced them).
 */
export type Forward = (name: string, type: string, parameters: Body) => Promise<Record<string, unknown>>;
/** One proxied request: its body, its configuration, and the proxy key's client. */
export interface Call {
  readonly body: Body;
  readonly config: AuthProxyConfigRecord;
  readonly settings: AuthProxySettings;
  readonly forward: Forward;
  /** Runs a public-API query in the configuration's organization with the proxy key. */
  readonly query: (name: string, body: Body) => Promise<Record<string, unknown>>;
  readonly limit: (key: string, perMinute: number) => void;
}

const MAX_BODY = 64 * 1024;

function str(b: Body, ...names: string[]): string {
  for (const n of names) {
    const v = b[n];
    if (typeof v === 'string' && v !== '') return v;
  }
  throw new CountersignError('FIELD_MISSING', `${names[0]}: is required`, { field: names[0] as string });
}

function opt(b: Body, ...names: string[]): unknown {
  for (const n of names) if (b[n] !== undefined && b[n] !== null) return b[n];
  return undefined;
}

const pick = (o: Record<string, unknown>, key: string): Record<string, unknown> =>
  (o[key] ?? {}) as Record<string, unknown>;

async function otpInit(c: Call, v2: boolean): Promise<Body> {
  const otpType = str(c.body, 'otpType');
  const contact = str(c.body, 'contact');
  c.limit(`contact:${contact.toLowerCase()}`, c.settings.otpInitPerMinutePerContact);
  const r = await c.forward('init_otp', 'ACTIVITY_TYPE_INIT_OTP_V3', {
    otpType,
    contact,
    appName: c.settings.appName,
  });
  const res = pick(r, 'initOtpResultV2');
  return v2
    ? { otpId: res.otpId, otpEncryptionTargetBundle: res.otpEncryptionTargetBundle }
    : { otpId: res.otpId };
}

async function otpVerify(c: Call, v2: boolean): Promise<Body> {
  const otpId = str(c.body, 'otpId');
  const parameters: Body = v2
    ? { otpId, encryptedOtpBundle: str(c.body, 'encryptedOtpBundle') }
    : { otpId, otpCode: str(c.body, 'otpCode'), publicKey: opt(c.body, 'publicKey', 'public_key') ?? '' };
  const r = await c.forward('verify_otp', 'ACTIVITY_TYPE_VERIFY_OTP_V2', parameters);
  return { verificationToken: pick(r, 'verifyOtpResult').verificationToken };
}

/**
 * The seed's `client_signature` is a hex string: a P-256 signature (r‖s) over the verification token
 * itself by the key the token was issued to. Current clients send the object form of 9.2. The string
 * is turned into that object here, naming the token as the signed message; the service checks it.
 */
function seedClientSignature(signature: string, verificationToken: string): Body {
  let publicKey: unknown;
  try {
    const payload = verificationToken.split('.')[1] ?? '';
    publicKey = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Body).public_key;
  } catch {
    publicKey = undefined;
  }
  if (typeof publicKey !== 'string' || publicKey === '')
    throw invalid('verificationToken', 'is not a verification token issued to a key');
  return { publicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256', message: verificationToken, signature };
}

async function otpLogin(c: Call): Promise<Body> {
  const verificationToken = str(c.body, 'verificationToken');
  let clientSignature = opt(c.body, 'clientSignature', 'client_signature');
  if (typeof clientSignature === 'string')
    clientSignature = seedClientSignature(clientSignature, verificationToken);
  if (typeof clientSignature !== 'object' || clientSignature === null)
    throw invalid(
      'clientSignature',
      'is required: {publicKey, scheme, message, signature}, or the hex signature over the verification token',
    );
  const organizationId = opt(c.body, 'organizationId');
  const r = await c.forward('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', {
    verificationToken,
    publicKey: str(c.body, 'publicKey', 'public_key'),
    clientSignature,
    expirationSeconds: c.settings.sessionExpirationSeconds,
    invalidateExisting: opt(c.body, 'invalidateExisting') === true,
    ...(typeof organizationId === 'string' ? { organizationId } : {}),
  });
  return { session: pick(r, 'otpLoginResult').session };
}

const ROUTES: Record<string, (c: Call) => Promise<Body>> = {
  '/v1/otp_init': (c) => otpInit(c, false),
  '/v1/otp_init_v2': (c) => otpInit(c, true),
  '/v1/otp_verify': (c) => otpVerify(c, false),
  '/v1/otp_verify_v2': (c) => otpVerify(c, true),
  '/v1/otp_login': otpLogin,
  '/v1/otp_login_v2': otpLogin,
  '/v1/wallet_kit_config': async (c) => ({
    enabledProviders: c.settings.enabledProviders,
    sessionExpirationSeconds: c.settings.sessionExpirationSeconds,
    organizationId: c.config.organizationId,
    oauthClientIds: c.settings.oauthClientIds,
    ...(c.settings.oauthRedirectUrl === null ? {} : { oauthRedirectUrl: c.settings.oauthRedirectUrl }),
    otpAlphanumeric: c.settings.otpAlphanumeric,
    otpLength: String(c.settings.otpLength),
  }),
  '/v1/wallet_kit_client_params': async () => ({}),
  ...SIGNUP_ROUTES,
  ...OAUTH_ROUTES,
};

/** Fixed one-minute windows per key; old windows are dropped as the map is touched. */
class RateLimiter {
  readonly #counts = new Map<string, { window: number; n: number }>();
  hit(key: string, perMinute: number, nowMs: number): boolean {
    const window = Math.floor(nowMs / 60_000);
    if (this.#counts.size > 100_000)
      for (const [k, v] of this.#counts) if (v.window < window) this.#counts.delete(k);
    const e = this.#counts.get(key);
    if (e === undefined || e.window !== window) {
      this.#counts.set(key, { window, n: 1 });
      return true;
    }
    e.n += 1;
    return e.n <= perMinute;
  }
}

export async function startAuthProxy(opts: AuthProxyOptions): Promise<AuthProxyListener> {
  const now = opts.now ?? Date.now;
  const limiter = new RateLimiter();

  /** The forwarder of one request: the proxy key opened now, used by the stamper, the bytes zeroed. */
  async function withProxyClient<T>(
    config: AuthProxyConfigRecord,
    fn: (f: Forward, q: Call['query']) => Promise<T>,
  ): Promise<T> {
    const secret = opts.vault.open(config.sealedApiKey, proxyKeyAad(config.organizationId));
    let stamper: ApiKeyStamper;
    try {
      stamper = new ApiKeyStamper({
        apiPublicKey: bytesToHex(p256.getPublicKey(secret, true)),
        apiPrivateKey: bytesToHex(secret),
      });
    } finally {
      zeroize(secret);
    }
    const client = new PublicApiClient({
      transport: opts.transport,
      stamper,
      organizationId: config.organizationId,
    });
    const query: Call['query'] = async (name, body) => await client.query(name, body);
    return fn(async (name, type, parameters) => {
      const body = JSON.stringify({
        type,
        timestampMs: String(Date.now()),
        organizationId: config.organizationId,
        parameters,
      });
      const activity = await client.submit(name, new TextEncoder().encode(body));
      if (activity.failure !== undefined)
        throw new CountersignError('UPSTREAM_ERROR', activity.failure.message ?? 'the activity failed');
      const result = activity.result as Record<string, unknown>;
      // App proofs are handed on unverified (seed 1): the end user's client verifies them.
      return activity.appProofs === undefined ? result : { ...result, appProofs: activity.appProofs };
    }, query);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] as string;
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    const headers: Record<string, string> = { 'content-type': 'application/json', vary: 'Origin' };
    const send = (status: number, body: unknown) => {
      res.writeHead(status, headers);
      res.end(JSON.stringify(body));
    };
    const fail = (e: CountersignError) => send(e.httpStatus, toRpcStatus(e));
    try {
      if (path === '/healthz' && req.method === 'GET') return send(200, { ok: true });
      const route = ROUTES[path];
      if (route === undefined)
        throw new CountersignError(
          'ROUTE_NOT_FOUND',
          `auth proxy endpoint ${path} is not served by this version`,
        );
      // Node lower-cases header names: X-Auth-Proxy-Config-ID and -Id are the same header.
      const configId = req.headers['x-auth-proxy-config-id'];
      // A browser's preflight carries no custom header, so it cannot name its configuration: it is
      // answered for any origin, and the request that follows (which names it) is checked against
      // the allowlist; a refused origin gets 403 without CORS headers and nothing is forwarded.
      if (req.method === 'OPTIONS' && configId === undefined) {
        res.writeHead(204, {
          vary: 'Origin',
          'access-control-allow-origin': origin ?? '*',
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': 'content-type, x-auth-proxy-config-id, x-captcha-token',
          'access-control-max-age': '600',
        });
        res.end();
        return;
      }
      if (typeof configId !== 'string' || configId === '')
        throw new CountersignError('FIELD_MISSING', 'X-Auth-Proxy-Config-Id: the header is required', {
          field: 'X-Auth-Proxy-Config-Id',
        });
      const config = await opts.store.getAuthProxyConfigById(configId);
      if (config === undefined || !config.enabled)
        throw new CountersignError(
          'RESOURCE_NOT_FOUND',
          'X-Auth-Proxy-Config-Id: no enabled auth proxy configuration has this id',
          {
            field: 'X-Auth-Proxy-Config-Id',
          },
        );
      const settings = readSettings(config.settingsJson);
      if (origin !== undefined) {
        const any = settings.allowedOrigins.includes('*');
        if (!any && !settings.allowedOrigins.includes(origin))
          throw new CountersignError(
            'REQUEST_NOT_AUTHORIZED',
            `origin ${origin} is not allowed by this auth proxy configuration`,
            {
              field: 'Origin',
            },
          );
        headers['access-control-allow-origin'] = any ? '*' : origin;
        headers['access-control-allow-methods'] = 'POST, OPTIONS';
        headers['access-control-allow-headers'] = 'content-type, x-auth-proxy-config-id, x-captcha-token';
      }
      if (req.method === 'OPTIONS') {
        res.writeHead(204, headers);
        res.end();
        return;
      }
      if (req.method !== 'POST')
        throw new CountersignError('ROUTE_NOT_FOUND', `no route for ${req.method ?? ''} ${path}`);
      const addr = req.socket.remoteAddress ?? 'unknown';
      const limit = (key: string, perMinute: number) => {
        if (!limiter.hit(`${config.configId}/${key}`, perMinute, now()))
          throw new CountersignError(
            'RESOURCE_LIMIT_EXCEEDED',
            `rate limit exceeded (${perMinute} per minute per ${key.split(':')[0]}); try again later`,
          );
      };
      if (path.startsWith('/v1/otp_init') || path.startsWith('/v1/signup'))
        limit(`address:${addr}`, settings.requestsPerMinutePerAddress);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY)
          throw new CountersignError('BODY_TOO_LARGE', `request body exceeds ${MAX_BODY} bytes`);
        chunks.push(chunk as Buffer);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Body = {};
      if (text.trim() !== '') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new CountersignError('REQUEST_MALFORMED', 'the body is not JSON');
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new CountersignError('REQUEST_MALFORMED', 'the body must be a JSON object');
        body = parsed as Body;
      }
      const out = await withProxyClient(config, (forward, query) =>
        route({ body, config, settings, forward, query, limit }),
      );
      send(200, out);
    } catch (e) {
      if (isCountersignError(e)) return fail(e);
      opts.logger.error({ err: e, path }, 'auth proxy request failed');
      fail(new CountersignError('INTERNAL', 'internal server error'));
    }
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    address: `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
