/**
 * The auth proxy configuration an operator sets (enable_auth_proxy / update_auth_proxy_config,
 * issue 13 "Contracts"): parsed from activity parameters with every field optional ("fields left out
 * keep their value"), stored as JSON beside the proxy's key, and read by the proxy per request.
 */
import { invalid } from '../../shared/errors.js';
import type { Params } from '../activities/params.js';

export interface OAuth2Credential {
  readonly clientId: string;
  readonly tokenUrl: string;
  readonly userInfoUrl: string;
  readonly encryptedClientSecret: string;
}

export interface AuthProxySettings {
  /** Exact origins (scheme://host[:port]) or the single entry `*`. */
  readonly allowedOrigins: readonly string[];
  readonly sessionExpirationSeconds: string;
  readonly otpLength: number;
  readonly otpAlphanumeric: boolean;
  readonly otpExpirationSeconds: string;
  readonly appName: string;
  /** Mail body; `{{.OtpCode}}` and `{{.AppName}}` are replaced. Null: the built-in text. */
  readonly emailTemplate: string | null;
  readonly smsTemplate: string | null;
  readonly enabledProviders: readonly string[];
  readonly oauthClientIds: Readonly<Record<string, string>>;
  readonly oauthRedirectUrl: string | null;
  readonly oauth2Credentials: Readonly<Record<string, OAuth2Credential>>;
  /** Abuse limits (issue 13 defaults). */
  readonly maxLiveOtpsPerContact: number;
  readonly otpInitPerMinutePerContact: number;
  readonly requestsPerMinutePerAddress: number;
}

export const DEFAULT_SETTINGS: AuthProxySettings = {
  allowedOrigins: ['*'],
  sessionExpirationSeconds: '900',
  otpLength: 6,
  otpAlphanumeric: false,
  otpExpirationSeconds: '300',
  appName: 'countersign',
  emailTemplate: null,
  smsTemplate: null,
  enabledProviders: ['email'],
  oauthClientIds: {},
  oauthRedirectUrl: null,
  oauth2Credentials: {},
  maxLiveOtpsPerContact: 10,
  otpInitPerMinutePerContact: 10,
  requestsPerMinutePerAddress: 60,
};

const P = 'parameters';
const PROVIDERS = ['google', 'facebook', 'apple', 'x', 'discord', 'email', 'sms', 'passkey', 'wallet'];

/** One allowed-origin entry: `*`, or an exact http(s) origin; partial wildcards are refused. */
export function parseOrigin(v: unknown, field: string): string {
  if (typeof v !== 'string') throw invalid(field, 'must be a string');
  if (v === '*') return v;
  if (v.includes('*'))
    throw invalid(field, `'${v}': partial wildcards are unsupported; list each origin, or use '*' alone`);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw invalid(field, `'${v}' is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid(field, 'must be an http(s) origin');
  if (url.origin !== v.replace(/\/$/, ''))
    throw invalid(field, `'${v}' must be an origin only (scheme://host[:port]), as browsers send it`);
  return url.origin;
}

function secondsString(v: unknown, field: string, min: number, max: number): string {
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || !/^[0-9]{1,9}$/.test(s))
    throw invalid(field, 'must be a whole number of seconds (a decimal string)');
  const n = Number(s);
  if (n < min || n > max) throw invalid(field, `must be between ${min} and ${max}`);
  return String(n);
}

function count(v: unknown, field: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw invalid(field, `must be a whole number from ${min} to ${max}`);
  return v;
}

function str(v: unknown, field: string, max = 4096): string {
  if (typeof v !== 'string') throw invalid(field, 'must be a string');
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

function record<T>(v: unknown, field: string, each: (x: unknown, f: string) => T): Record<string, T> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(field, 'must be an object');
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(v)) {
    // Assigned to a plain object, this key would set its prototype, not add an entry.
    if (k === '__proto__') throw invalid(`${field}.${k}`, 'is not an allowed key');
    out[k] = each(x, `${field}.${k}`);
  }
  return out;
}

/** `current` with the fields `p` sets replaced; every present field is checked. */
export function applySettings(current: AuthProxySettings, p: Params): AuthProxySettings {
  const has = (k: string) => p[k] !== undefined && p[k] !== null;
  const out: Record<string, unknown> = { ...current };
  if (has('allowedOrigins')) {
    const v = p.allowedOrigins;
    if (!Array.isArray(v) || v.length === 0)
      throw invalid(`${P}.allowedOrigins`, "must be a non-empty array of origins (or ['*'])");
    out.allowedOrigins = [...new Set(v.map((o, i) => parseOrigin(o, `${P}.allowedOrigins.${i}`)))];
  }
  if (has('sessionExpirationSeconds'))
    out.sessionExpirationSeconds = secondsString(
      p.sessionExpirationSeconds,
      `${P}.sessionExpirationSeconds`,
      60,
      365 * 24 * 3600,
    );
  if (has('otpLength')) out.otpLength = count(p.otpLength, `${P}.otpLength`, 6, 9);
  if (has('otpAlphanumeric')) {
    if (typeof p.otpAlphanumeric !== 'boolean') throw invalid(`${P}.otpAlphanumeric`, 'must be a boolean');
    out.otpAlphanumeric = p.otpAlphanumeric;
  }
  if (has('otpExpirationSeconds'))
    out.otpExpirationSeconds = secondsString(p.otpExpirationSeconds, `${P}.otpExpirationSeconds`, 30, 600);
  if (has('appName')) {
    const n = str(p.appName, `${P}.appName`, 100).trim();
    if (n === '') throw invalid(`${P}.appName`, 'must not be empty');
    out.appName = n;
  }
  for (const k of ['emailTemplate', 'smsTemplate'] as const)
    if (has(k)) {
      const t = str(p[k], `${P}.${k}`);
      if (!t.includes('{{.OtpCode}}')) throw invalid(`${P}.${k}`, 'must contain {{.OtpCode}}');
      out[k] = t;
    }
  if (has('enabledProviders')) {
    const v = p.enabledProviders;
    if (!Array.isArray(v)) throw invalid(`${P}.enabledProviders`, 'must be an array');
    out.enabledProviders = v.map((x, i) => {
      const f = `${P}.enabledProviders.${i}`;
      if (typeof x !== 'string' || !PROVIDERS.includes(x))
        throw invalid(f, `must be one of ${PROVIDERS.join(', ')}`);
      return x;
    });
  }
  if (has('oauthClientIds'))
    out.oauthClientIds = record(p.oauthClientIds, `${P}.oauthClientIds`, (x, f) => str(x, f, 512));
  if (has('oauthRedirectUrl')) out.oauthRedirectUrl = parseUrl(p.oauthRedirectUrl, `${P}.oauthRedirectUrl`);
  if (has('oauth2Credentials'))
    out.oauth2Credentials = record(p.oauth2Credentials, `${P}.oauth2Credentials`, (x, f) => {
      if (typeof x !== 'object' || x === null || Array.isArray(x)) throw invalid(f, 'must be an object');
      const o = x as Params;
      return {
        clientId: str(o.clientId, `${f}.clientId`, 512),
        tokenUrl: parseUrl(o.tokenUrl, `${f}.tokenUrl`),
        userInfoUrl: parseUrl(o.userInfoUrl, `${f}.userInfoUrl`),
        encryptedClientSecret: str(o.encryptedClientSecret, `${f}.encryptedClientSecret`),
      };
    });
  if (has('maxLiveOtpsPerContact'))
    out.maxLiveOtpsPerContact = count(p.maxLiveOtpsPerContact, `${P}.maxLiveOtpsPerContact`, 1, 1000);
  if (has('otpInitPerMinutePerContact'))
    out.otpInitPerMinutePerContact = count(
      p.otpInitPerMinutePerContact,
      `${P}.otpInitPerMinutePerContact`,
      1,
      100000,
    );
  if (has('requestsPerMinutePerAddress'))
    out.requestsPerMinutePerAddress = count(
      p.requestsPerMinutePerAddress,
      `${P}.requestsPerMinutePerAddress`,
      1,
      1000000,
    );
  return out as unknown as AuthProxySettings;
}

function parseUrl(v: unknown, field: string): string {
  const s = str(v, field, 2048);
  try {
    const u = new URL(s);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw invalid(field, 'must be an absolute http(s) URL');
  }
  return s;
}

/** Stored settings, completed with today's defaults (a field added later reads as its default). */
export function readSettings(json: string): AuthProxySettings {
  return { ...DEFAULT_SETTINGS, ...(JSON.parse(json) as Partial<AuthProxySettings>) };
}
