/**
 * OAuth for end users (turnkey-api.md 9.3, issue 13):
 * - oauth_login: an OIDC token (verified against its issuer's JWKS, or issued by this service) whose
 *   nonce is sha256(publicKey) → a session of the user holding that (iss, aud, sub), in this
 *   organization or one of its sub-organizations;
 * - oauth2_authenticate: the PKCE authorization-code exchange with an OAuth 2.0-only provider (X,
 *   Discord) using the client secret stored in the auth-proxy configuration (sealed to the service's
 *   TLS-fetcher key, opened in memory for this request only), the user-info call, then an OIDC token
 *   issued by this service that oauth_login accepts;
 * - create_oauth_providers / delete_oauth_providers: a user's OAuth providers.
 */
import { randomUUID } from 'node:crypto';
import { hexToBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { outboundRequest } from '../../shared/outbound/outboundRequest.js';
import { authContextOf } from '../authProxy/context.js';
import { signServiceOidcToken, verifyOrganizationOidcToken } from '../authProxy/oidcTokens.js';
import { readSettings, type OAuth2Credential } from '../authProxy/settings.js';
import { SERVICE_TLS_FETCHER_KEY_ID, withServiceKey } from '../keys/index.js';
import { assertP256UncompressedPublicKey, openFromTurnkeySender } from '../keys/hpke.js';
import type { OAuthProviderRecord, Store, OrganizationRecord, UserRecord } from '../store/types.js';
import { asObject, optBool, optString, reqArray, reqString, type Params } from './params.js';
import { openSecretParam } from './sealSecretParams.js';
import { openLoginSession, sessionPublicKey, sessionSeconds } from './sessions.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

const P = 'parameters';
const OAUTH2_PROVIDERS = { OAUTH2_PROVIDER_X: 'x', OAUTH2_PROVIDER_DISCORD: 'discord' } as const;
type Oauth2Provider = keyof typeof OAUTH2_PROVIDERS;

function secretText(ctx: ActivityContext, p: Params, name: string): string {
  const bytes = openSecretParam(ctx.vault, ctx.activityId, p, name);
  if (bytes === undefined || bytes.length === 0) throw invalid(`${P}.${name}`, 'is required');
  const text = Buffer.from(bytes).toString('utf8');
  zeroize(bytes);
  return text;
}

/** The user holding (iss, aud, sub) in `org` or its sub-organizations; `wantedOrg` narrows it. */
export async function oauthUser(
  store: Store,
  org: OrganizationRecord,
  claims: { readonly issuer: string; readonly audience: string; readonly subject: string },
  wantedOrg: string | undefined,
  field: string,
): Promise<UserRecord> {
  const found = (
    await store.findOAuthProviderUsers(org.id, claims.issuer, claims.audience, claims.subject)
  ).filter((f) => wantedOrg === undefined || f.organizationId === wantedOrg);
  const orgs = new Set(found.map((f) => f.organizationId));
  if (orgs.size > 1)
    throw invalid(
      `${P}.organizationId`,
      'several sub-organizations have a user with this OAuth provider; name the one to log in to',
    );
  const first = found[0];
  const user = first === undefined ? undefined : await store.getUser(first.userId);
  if (user === undefined)
    throw new CountersignError(
      'RESOURCE_NOT_FOUND',
      `${field}: no user of this organization${wantedOrg === undefined ? ' or its sub-organizations' : ` in ${wantedOrg}`} has an OAuth provider with this token's issuer, audience and subject`,
      { field },
    );
  return user;
}

const oauthLogin = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${P}.oidcToken`;
  const token = secretText(ctx, p, 'oidcToken');
  const publicKey = sessionPublicKey(p);
  const seconds = sessionSeconds(p);
  const invalidateExisting = optBool(p, 'invalidateExisting', P) ?? false;
  const wantedOrg = optString(p, 'organizationId', P) || undefined;
  const claims = await verifyOrganizationOidcToken({
    store: ctx.store,
    organization: ctx.organization,
    token,
    field,
    nowMs: ctx.nowMs,
    publicKey,
  });
  const user = await oauthUser(ctx.store, ctx.organization, claims, wantedOrg, field);
  const { session, write } = await openLoginSession(ctx, { user, publicKey, seconds, invalidateExisting });
  return { result: { session }, write };
};

/** The stored credential of `provider` ('OAUTH2_PROVIDER_X' or its short name 'x' as the key). */
async function oauth2Credential(ctx: ActivityContext, provider: Oauth2Provider): Promise<OAuth2Credential> {
  for (const id of [ctx.organization.id, ctx.organization.parentId]) {
    if (id === null) continue;
    const config = await ctx.store.getAuthProxyConfig(id);
    if (config === undefined) continue;
    const creds = readSettings(config.settingsJson).oauth2Credentials;
    const c = creds[provider] ?? creds[OAUTH2_PROVIDERS[provider]];
    if (c !== undefined) return c;
  }
  throw invalid(
    `${P}.provider`,
    `OAUTH2_PROVIDER_NOT_CONFIGURED: no oauth2Credentials for ${provider} in this organization's auth proxy configuration`,
  );
}

/**
 * The client secret of `cred`: a JSON bundle `{encappedPublic, ciphertext}` sealed (HPKE, as
 * @turnkey/crypto's hpkeEncrypt) to the service's TLS-fetcher key. The caller zeroes it.
 */
async function clientSecret(ctx: ActivityContext, cred: OAuth2Credential): Promise<Uint8Array> {
  const field = 'oauth2Credentials.encryptedClientSecret';
  const target = await ctx.store.getServiceKey(SERVICE_TLS_FETCHER_KEY_ID);
  if (target === undefined)
    throw new CountersignError(
      'KEY_MATERIAL_UNAVAILABLE',
      `the service has no ${SERVICE_TLS_FETCHER_KEY_ID} key`,
    );
  let bundle: Params;
  try {
    bundle = asObject(JSON.parse(cred.encryptedClientSecret), field);
  } catch {
    throw invalid(field, 'must be the JSON {encappedPublic, ciphertext} sealed to the TLS-fetcher key');
  }
  const enc = hexToBytes(reqString(bundle, 'encappedPublic', field), `${field}.encappedPublic`);
  const ct = hexToBytes(reqString(bundle, 'ciphertext', field), `${field}.ciphertext`);
  assertP256UncompressedPublicKey(enc, `${field}.encappedPublic`);
  const plain = withServiceKey(ctx.vault, target, (sk) =>
    openFromTurnkeySender({ recipientPrivateKey: sk, encappedPublic: enc, ciphertext: ct }),
  );
  if (plain === undefined)
    throw invalid(
      field,
      "does not open with this service's TLS-fetcher key (sealed to another key, or altered)",
    );
  return plain;
}

/**
 * One JSON exchange with the provider through the outbound guard; `urlField` names the configured
 * URL in guard and transport errors, `field` the request field a refusal is about.
 */
async function postJson(
  ctx: ActivityContext,
  url: string,
  urlField: string,
  field: string,
  what: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
): Promise<Params> {
  const res = await outboundRequest({
    url,
    method: init.method,
    headers: { accept: 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
    policy: authContextOf(ctx.store).policy,
    field: urlField,
    timeoutMs: 10_000,
  });
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(res.body).toString('utf8'));
  } catch {
    json = undefined;
  }
  if (res.status !== 200) {
    // OAuth errors (RFC 6749 5.2) carry a code; the description is the provider's and may echo input.
    const code =
      typeof json === 'object' &&
      json !== null &&
      typeof (json as Params).error === 'string' &&
      /^[a-z_]{1,64}$/.test((json as Params).error as string)
        ? ` ${(json as Params).error as string}`
        : '';
    throw invalid(field, `${what} refused: HTTP ${res.status}${code}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: ${what} did not answer a JSON object`, {
      field,
    });
  return json as Params;
}

/** The account id a user-info answer names: OIDC `sub`, Discord's `id`, X's `data.id`. */
function accountId(info: Params): string | undefined {
  const data = info.data;
  for (const v of [
    info.sub,
    info.id,
    typeof data === 'object' && data !== null ? (data as Params).id : undefined,
  ])
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') return String(v);
  return undefined;
}

const oauth2Authenticate = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const providerName = reqString(p, 'provider', P);
  if (!Object.hasOwn(OAUTH2_PROVIDERS, providerName))
    throw invalid(`${P}.provider`, `must be one of ${Object.keys(OAUTH2_PROVIDERS).join(', ')}`);
  const provider = providerName as Oauth2Provider;
  const redirectUri = reqString(p, 'redirectUri', P);
  const clientId = reqString(p, 'clientId', P);
  const nonce = reqString(p, 'nonce', P).toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(nonce))
    throw invalid(`${P}.nonce`, 'must be sha256(publicKey) as 64 hex digits');
  const authCode = secretText(ctx, p, 'authCode');
  const codeVerifier = secretText(ctx, p, 'codeVerifier');
  // RFC 7636 4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(codeVerifier))
    throw invalid(
      `${P}.codeVerifier`,
      'must be a PKCE code verifier (RFC 7636: 43-128 unreserved characters)',
    );
  const cred = await oauth2Credential(ctx, provider);
  if (cred.clientId !== clientId)
    throw invalid(`${P}.clientId`, `is not the client id configured for ${provider}`);

  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: authCode,
    redirect_uri: redirectUri,
    code_verifier: codeVerifier,
    client_id: clientId,
  }).toString();
  // RFC 6749 2.3.1: HTTP Basic with the form-encoded client id and secret. The secret's bytes are
  // zeroed; the header string it becomes cannot be, and lives only for this request.
  const secret = await clientSecret(ctx, cred);
  let authorization: string;
  try {
    const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
    authorization = `Basic ${Buffer.from(`${enc(clientId)}:${enc(Buffer.from(secret).toString('utf8'))}`).toString('base64')}`;
  } finally {
    zeroize(secret);
  }
  const configField = `oauth2Credentials.${OAUTH2_PROVIDERS[provider]}`;
  const tokens = await postJson(
    ctx,
    cred.tokenUrl,
    `${configField}.tokenUrl`,
    `${P}.authCode`,
    "the provider's token endpoint",
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
      body: form,
    },
  );
  const accessToken = tokens.access_token;
  if (typeof accessToken !== 'string' || accessToken === '')
    throw new CountersignError(
      'OUTBOUND_REQUEST_FAILED',
      `${P}.authCode: the provider's token endpoint answered without an access_token`,
      { field: `${P}.authCode` },
    );
  const info = await postJson(
    ctx,
    cred.userInfoUrl,
    `${configField}.userInfoUrl`,
    `${P}.provider`,
    "the provider's user-info endpoint",
    {
      method: 'GET',
      headers: { authorization: `Bearer ${accessToken}` },
    },
  );
  const id = accountId(info);
  if (id === undefined)
    throw new CountersignError(
      'OUTBOUND_REQUEST_FAILED',
      `${P}.provider: the provider's user-info answer names no account id (sub, id or data.id)`,
      { field: `${P}.provider` },
    );
  const oidcToken = await signServiceOidcToken({
    store: ctx.store,
    vault: ctx.vault,
    nowMs: ctx.nowMs,
    audience: clientId,
    subject: `${OAUTH2_PROVIDERS[provider]}:${id}`,
    nonce,
  });
  return { result: { oidcToken } };
};

/** `{providerName, oidcToken}` (verified) or, from V2 on, `{providerName, oidcClaims: {iss, sub, aud}}`. */
async function providerSpec(
  ctx: ActivityContext,
  value: unknown,
  field: string,
  claimsAllowed: boolean,
): Promise<{ name: string; issuer: string; audience: string; subject: string }> {
  const o = asObject(value, field);
  const name = reqString(o, 'providerName', field);
  if (claimsAllowed && o.oidcClaims !== undefined && o.oidcClaims !== null) {
    const c = asObject(o.oidcClaims, `${field}.oidcClaims`);
    return {
      name,
      issuer: reqString(c, 'iss', `${field}.oidcClaims`),
      audience: reqString(c, 'aud', `${field}.oidcClaims`),
      subject: reqString(c, 'sub', `${field}.oidcClaims`),
    };
  }
  const claims = await verifyOrganizationOidcToken({
    store: ctx.store,
    organization: ctx.organization,
    token: reqString(o, 'oidcToken', field),
    field: `${field}.oidcToken`,
    nowMs: ctx.nowMs,
  });
  return { name, issuer: claims.issuer, audience: claims.audience, subject: claims.subject };
}

function createOauthProviders(claimsAllowed: boolean) {
  return async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
    const userId = reqString(p, 'userId', P);
    const user = await ctx.store.getUser(userId);
    if (user === undefined || user.organizationId !== ctx.organization.id)
      throw new CountersignError('RESOURCE_NOT_FOUND', `${P}.userId: no such user in this organization`, {
        field: `${P}.userId`,
      });
    const list = reqArray(p, 'oauthProviders', P);
    if (list.length === 0) throw invalid(`${P}.oauthProviders`, 'must hold at least one provider');
    const records: OAuthProviderRecord[] = [];
    for (const [i, v] of list.entries())
      records.push({
        id: randomUUID(),
        userId,
        organizationId: ctx.organization.id,
        ...(await providerSpec(ctx, v, `${P}.oauthProviders.${i}`, claimsAllowed)),
        createdAtMs: ctx.nowMs,
      });
    return {
      result: { providerIds: records.map((r) => r.id) },
      write: async (tx) => {
        const seen = new Set<string>();
        for (const [i, r] of records.entries()) {
          const key = JSON.stringify([r.issuer, r.audience, r.subject]);
          if (
            seen.has(key) ||
            (await tx.oauthProviderTaken(r.organizationId, r.issuer, r.audience, r.subject))
          )
            throw invalid(
              `${P}.oauthProviders.${i}`,
              'OAUTH_PROVIDER_ALREADY_EXISTS: a user of the organization already has this (iss, aud, sub)',
            );
          seen.add(key);
          await tx.insertOAuthProvider(r);
        }
      },
    };
  };
}

const deleteOauthProviders = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const userId = reqString(p, 'userId', P);
  const user = await ctx.store.getUser(userId);
  if (user === undefined || user.organizationId !== ctx.organization.id)
    throw new CountersignError('RESOURCE_NOT_FOUND', `${P}.userId: no such user in this organization`, {
      field: `${P}.userId`,
    });
  const ids = reqArray(p, 'providerIds', P).map((v, i) => {
    if (typeof v !== 'string' || v === '') throw invalid(`${P}.providerIds.${i}`, 'must be a provider id');
    return v;
  });
  if (ids.length === 0) throw invalid(`${P}.providerIds`, 'must hold at least one provider id');
  if (new Set(ids).size !== ids.length) throw invalid(`${P}.providerIds`, 'must not repeat an id');
  return {
    result: { providerIds: ids },
    write: async (tx) => {
      for (const [i, id] of ids.entries())
        if (!(await tx.deleteOAuthProvider(userId, id)))
          throw new CountersignError(
            'RESOURCE_NOT_FOUND',
            `${P}.providerIds.${i}: the user has no OAuth provider with this id`,
            { field: `${P}.providerIds.${i}` },
          );
    },
  };
};

export const OAUTH_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_OAUTH_LOGIN',
    path: 'oauth_login',
    intentKey: 'oauthLoginIntent',
    resultKey: 'oauthLoginResult',
    run: oauthLogin,
    secretParams: ['oidcToken'],
  },
  {
    type: 'ACTIVITY_TYPE_OAUTH2_AUTHENTICATE',
    path: 'oauth2_authenticate',
    intentKey: 'oauth2AuthenticateIntent',
    resultKey: 'oauth2AuthenticateResult',
    run: oauth2Authenticate,
    secretParams: ['authCode', 'codeVerifier'],
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS',
    path: 'create_oauth_providers',
    intentKey: 'createOauthProvidersIntent',
    resultKey: 'createOauthProvidersResult',
    run: createOauthProviders(false),
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2',
    path: 'create_oauth_providers',
    intentKey: 'createOauthProvidersIntentV2',
    resultKey: 'createOauthProvidersResultV2',
    run: createOauthProviders(true),
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS',
    path: 'delete_oauth_providers',
    intentKey: 'deleteOauthProvidersIntent',
    resultKey: 'deleteOauthProvidersResult',
    run: deleteOauthProviders,
  },
];
