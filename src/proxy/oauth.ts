/**
 * The auth proxy's OAuth endpoints (seed 4.2, turnkey-api.md 10): `/v1/oauth_login` → oauth_login
 * and `/v1/oauth2_authenticate` → oauth2_authenticate, forwarded through the proxy's stamped client
 * like the OTP endpoints. Field names are Turnkey's (camelCase); the snake_case spelling of each is
 * accepted too and normalized here.
 */
import { CountersignError, invalid } from '../shared/errors.js';

type Body = Record<string, unknown>;

/** What these routes need of a proxy call (a structural subset of proxy.ts's Call). */
export interface OAuthCall {
  readonly body: Body;
  readonly settings: { readonly sessionExpirationSeconds: string };
  readonly forward: (name: string, type: string, parameters: Body) => Promise<Record<string, unknown>>;
}

function str(b: Body, ...names: string[]): string {
  for (const n of names) {
    const v = b[n];
    if (typeof v === 'string' && v !== '') return v;
    if (v !== undefined && v !== null && typeof v !== 'string') throw invalid(n, 'must be a string');
  }
  throw new CountersignError('FIELD_MISSING', `${names[0]}: is required`, { field: names[0] as string });
}

function opt(b: Body, ...names: string[]): unknown {
  for (const n of names) if (b[n] !== undefined && b[n] !== null) return b[n];
  return undefined;
}

const result = (r: Record<string, unknown>, key: string): Record<string, unknown> =>
  (r[key] ?? {}) as Record<string, unknown>;

async function oauthLogin(c: OAuthCall): Promise<Body> {
  const organizationId = opt(c.body, 'organizationId', 'organization_id');
  if (organizationId !== undefined && typeof organizationId !== 'string')
    throw invalid('organizationId', 'must be a string');
  const invalidate = opt(c.body, 'invalidateExisting', 'invalidate_existing');
  if (invalidate !== undefined && typeof invalidate !== 'boolean')
    throw invalid('invalidateExisting', 'must be a boolean');
  const r = await c.forward('oauth_login', 'ACTIVITY_TYPE_OAUTH_LOGIN', {
    oidcToken: str(c.body, 'oidcToken', 'oidc_token'),
    publicKey: str(c.body, 'publicKey', 'public_key'),
    expirationSeconds: c.settings.sessionExpirationSeconds,
    invalidateExisting: invalidate === true,
    ...(organizationId === undefined || organizationId === '' ? {} : { organizationId }),
  });
  return { session: result(r, 'oauthLoginResult').session };
}

async function oauth2Authenticate(c: OAuthCall): Promise<Body> {
  const raw = str(c.body, 'provider');
  // The SDK's UI ids (x, discord) name the same providers as the enum.
  const provider = /^[a-z]+$/.test(raw) ? `OAUTH2_PROVIDER_${raw.toUpperCase()}` : raw;
  const r = await c.forward('oauth2_authenticate', 'ACTIVITY_TYPE_OAUTH2_AUTHENTICATE', {
    provider,
    authCode: str(c.body, 'authCode', 'auth_code'),
    redirectUri: str(c.body, 'redirectUri', 'redirect_uri'),
    codeVerifier: str(c.body, 'codeVerifier', 'code_verifier'),
    nonce: str(c.body, 'nonce'),
    clientId: str(c.body, 'clientId', 'client_id'),
  });
  return { oidcToken: result(r, 'oauth2AuthenticateResult').oidcToken };
}

export const OAUTH_ROUTES: Readonly<Record<string, (c: OAuthCall) => Promise<Body>>> = {
  '/v1/oauth_login': oauthLogin,
  '/v1/oauth2_authenticate': oauth2Authenticate,
};
