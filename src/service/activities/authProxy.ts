/**
 * The organization's auth proxy configuration (issue 13 "Contracts"): enable_auth_proxy creates the
 * proxy's API-only user, its P-256 API key (kept sealed by the vault, opened per proxied request)
 * and a policy that lets that user submit the end-user auth activities and nothing else;
 * update_auth_proxy_config changes the settings; disable_auth_proxy turns the proxy off (the user,
 * key and policy stay, so enabling again keeps the config id clients were given).
 */
import { randomUUID } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { bytesToHex, zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { applySettings, DEFAULT_SETTINGS, readSettings } from '../authProxy/settings.js';
import type { AuthProxyConfigRecord, OrganizationRecord, Store, UserRecord } from '../store/types.js';
import type { Params } from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

/** The activities the proxy's key may submit (its policy's condition); everything else is denied. */
export const AUTH_PROXY_ACTIVITY_TYPES = [
  'ACTIVITY_TYPE_INIT_OTP_V3',
  'ACTIVITY_TYPE_VERIFY_OTP_V2',
  'ACTIVITY_TYPE_OTP_LOGIN_V2',
  'ACTIVITY_TYPE_OAUTH_LOGIN',
  'ACTIVITY_TYPE_OAUTH2_AUTHENTICATE',
  'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
] as const;

/** Vault AAD of the proxy's sealed API key: bound to its organization. */
export const proxyKeyAad = (organizationId: string): string => `auth-proxy/${organizationId}`;

function notEnabledYet(): CountersignError {
  return new CountersignError(
    'RESOURCE_NOT_FOUND',
    'the auth proxy has never been enabled for this organization; run enable_auth_proxy first',
  );
}

const enableAuthProxy = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const org = ctx.organization.id;
  const existing = await ctx.store.getAuthProxyConfig(org);
  if (existing !== undefined) {
    const settings = applySettings(readSettings(existing.settingsJson), p);
    return {
      result: { configId: existing.configId, userId: existing.userId },
      write: async (tx) =>
        await tx.putAuthProxyConfig({
          ...existing,
          enabled: true,
          settingsJson: JSON.stringify(settings),
          updatedAtMs: ctx.nowMs,
        }),
    };
  }
  const settings = applySettings(DEFAULT_SETTINGS, p);
  const configId = randomUUID();
  const user: UserRecord = {
    id: randomUUID(),
    organizationId: org,
    name: `Auth Proxy ${configId.slice(0, 8)}`,
    email: null,
    phoneNumber: null,
    isRoot: false,
    createdAtMs: ctx.nowMs,
    updatedAtMs: ctx.nowMs,
  };
  const secret = p256.utils.randomSecretKey();
  let sealed: Uint8Array;
  let publicKey: string;
  try {
    publicKey = bytesToHex(p256.getPublicKey(secret, true));
    sealed = ctx.vault.seal(secret, proxyKeyAad(org));
  } finally {
    zeroize(secret);
  }
  const apiKeyId = randomUUID();
  const policyId = randomUUID();
  const types = AUTH_PROXY_ACTIVITY_TYPES.map((t) => `'${t}'`).join(', ');
  const record: AuthProxyConfigRecord = {
    organizationId: org,
    configId,
    enabled: true,
    userId: user.id,
    apiKeyId,
    sealedApiKey: sealed,
    policyId,
    settingsJson: JSON.stringify(settings),
    createdAtMs: ctx.nowMs,
    updatedAtMs: ctx.nowMs,
  };
  return {
    result: { configId, userId: user.id },
    write: async (tx) => {
      await tx.insertUser(user);
      await tx.insertApiKey({
        id: apiKeyId,
        userId: user.id,
        organizationId: org,
        name: 'auth proxy',
        publicKey,
        curve: 'API_KEY_CURVE_P256',
        expiresAtMs: null,
        createdAtMs: ctx.nowMs,
      });
      await tx.insertPolicy({
        id: policyId,
        organizationId: org,
        name: `Auth proxy ${configId.slice(0, 8)}: end-user auth activities only`,
        effect: 'EFFECT_ALLOW',
        condition: `activity.type in [${types}]`,
        consensus: `approvers.any(user, user.id == '${user.id}')`,
        time: null,
        notes:
          'Created by enable_auth_proxy: the proxy key may submit OTP, OAuth login and sign-up activities and nothing else.',
        createdAtMs: ctx.nowMs,
        updatedAtMs: ctx.nowMs,
      });
      await tx.putAuthProxyConfig(record);
    },
  };
};

const updateAuthProxyConfig = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const existing = await ctx.store.getAuthProxyConfig(ctx.organization.id);
  if (existing === undefined) throw notEnabledYet();
  const settings = applySettings(readSettings(existing.settingsJson), p);
  return {
    result: { configId: existing.configId },
    write: async (tx) =>
      await tx.putAuthProxyConfig({
        ...existing,
        settingsJson: JSON.stringify(settings),
        updatedAtMs: ctx.nowMs,
      }),
  };
};

const disableAuthProxy = async (ctx: ActivityContext): Promise<ActivityOutcome> => {
  const existing = await ctx.store.getAuthProxyConfig(ctx.organization.id);
  if (existing === undefined) throw notEnabledYet();
  return {
    result: { configId: existing.configId },
    write: async (tx) => await tx.putAuthProxyConfig({ ...existing, enabled: false, updatedAtMs: ctx.nowMs }),
  };
};

export const AUTH_PROXY_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY',
    path: 'enable_auth_proxy',
    intentKey: 'enableAuthProxyIntent',
    resultKey: 'enableAuthProxyResult',
    run: enableAuthProxy,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG',
    path: 'update_auth_proxy_config',
    intentKey: 'updateAuthProxyConfigIntent',
    resultKey: 'updateAuthProxyConfigResult',
    run: updateAuthProxyConfig,
  },
  {
    type: 'ACTIVITY_TYPE_DISABLE_AUTH_PROXY',
    path: 'disable_auth_proxy',
    intentKey: 'disableAuthProxyIntent',
    resultKey: 'disableAuthProxyResult',
    run: disableAuthProxy,
  },
];

/** The configuration as get_auth_proxy_config shows it (never the key). */
export function authProxyConfigJson(r: AuthProxyConfigRecord): Record<string, unknown> {
  return {
    configId: r.configId,
    enabled: r.enabled,
    userId: r.userId,
    organizationId: r.organizationId,
    ...readSettings(r.settingsJson),
    createdAt: { seconds: String(Math.floor(r.createdAtMs / 1000)), nanos: '0' },
    updatedAt: { seconds: String(Math.floor(r.updatedAtMs / 1000)), nanos: '0' },
  };
}

export const AUTH_PROXY_QUERIES: Record<
  string,
  (
    ctx: { readonly store: Store; readonly organization: OrganizationRecord },
    body: Params,
  ) => Promise<Record<string, unknown>>
> = {
  get_auth_proxy_config: async (ctx) => {
    const r = await ctx.store.getAuthProxyConfig(ctx.organization.id);
    if (r === undefined) throw notEnabledYet();
    return { authProxyConfig: authProxyConfigJson(r) };
  },
};
