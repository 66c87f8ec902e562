/** `POST /public/v1/query/<name>`: reads within the caller's organization (or a sub-organization). */
import { verifyOrganizationOidcToken } from '../authProxy/oidcTokens.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import {
  asObject,
  isUuid,
  notFound,
  optString,
  reqString,
  reqUuid,
  type Params,
} from '../activities/params.js';
import type {
  Store,
  WalletAccountRecord,
  WalletRecord,
  PrivateKeyRecord,
  PolicyRecord,
  OrganizationRecord,
  UserRecord,
  ApiKeyRecord, // --- users ---
  AuthenticatorRecord, // --- users ---
  OAuthProviderRecord, // --- users ---
} from '../store/types.js';
import { SERVICE_NOTARIZER_KEY_ID, SERVICE_SIGNER_KEY_ID } from '../keys/index.js';
import { SUB_ORGANIZATION_FILTER_TYPES, type SubOrganizationFilterType } from '../store/types.js';
import { ACTIVITY_STATUSES, type ActivityFilter, type ActivityStatus } from '../store/types.js'; // --- sub-organizations and sessions ---
import { activityResponse, timestampOf, userJson, type VoteWithUser } from './envelope.js';
import { createHash } from 'node:crypto'; // --- other resources ---
import type {
  FiatOnRampCredentialRecord,
  SmartContractInterfaceRecord,
  TvcDeploymentRecord,
} from '../store/types.js'; // --- other resources ---
import type { TvcDeploymentSpec } from '../activities/resources.js'; // --- other resources ---
import { parseAddress } from '../../../chains/ethereum/index.js'; // --- eth send transaction ---
import { sendContextOf } from '../send/context.js'; // --- eth send transaction ---
import { pendingNonce } from '../send/fillTransaction.js'; // --- eth send transaction ---
import { chainGasStationNonce, gasStationNonceKey } from '../send/gasStation.js'; // --- eth send transaction ---
import { CONTACT_KINDS } from '../store/types.js'; // --- administration ---
import { WEBHOOK_QUERIES } from '../activities/webhooks.js'; // --- webhooks ---
import { AUTH_PROXY_QUERIES } from '../activities/authProxy.js'; // --- auth proxy ---

/** Rough ceiling of one list response (stored intents and results), so no page fails on size. */
const MAX_LIST_RESPONSE_BYTES = 8 * 1024 * 1024;

export interface QueryContext {
  readonly store: Store;
  /** The organization the body names (already checked readable by the caller). */
  readonly organization: OrganizationRecord;
  readonly user: UserRecord;
}

type QueryHandler = (ctx: QueryContext, body: Params) => Promise<Record<string, unknown>>;

export async function votesWithUsers(store: Store, activityId: string): Promise<VoteWithUser[]> {
  const votes = await store.listVotes(activityId);
  return Promise.all(
    votes.map(async (vote) => {
      const user = await store.getUser(vote.userId);
      return {
        vote,
        user: user === undefined ? { userId: vote.userId } : userJson(user, await store.listApiKeys(user.id)),
      };
    }),
  );
}

function walletJson(w: WalletRecord) {
  return {
    walletId: w.id,
    walletName: w.name,
    createdAt: timestampOf(w.createdAtMs),
    updatedAt: timestampOf(w.updatedAtMs),
    exported: w.exported,
    imported: w.imported,
  };
}

function accountJson(a: WalletAccountRecord, wallet?: WalletRecord) {
  return {
    walletAccountId: a.id,
    organizationId: a.organizationId,
    walletId: a.walletId,
    curve: a.curve,
    pathFormat: a.pathFormat,
    path: a.path,
    addressFormat: a.addressFormat,
    address: a.address,
    createdAt: timestampOf(a.createdAtMs),
    updatedAt: timestampOf(a.updatedAtMs),
    publicKey: a.publicKey,
    ...(wallet === undefined ? {} : { walletDetails: walletJson(wallet) }),
  };
}

function privateKeyJson(k: PrivateKeyRecord) {
  return {
    privateKeyId: k.id,
    publicKey: k.publicKey,
    privateKeyName: k.name,
    curve: k.curve,
    addresses: k.addresses.map((a) => ({ format: a.format, address: a.address })),
    privateKeyTags: [...k.tags],
    createdAt: timestampOf(k.createdAtMs),
    updatedAt: timestampOf(k.updatedAtMs),
    exported: k.exported,
    imported: k.imported,
  };
}

function policyJson(p: PolicyRecord) {
  return {
    policyId: p.id,
    policyName: p.name,
    effect: p.effect,
    createdAt: timestampOf(p.createdAtMs),
    updatedAt: timestampOf(p.updatedAtMs),
    notes: p.notes,
    consensus: p.consensus ?? '',
    condition: p.condition ?? '',
    ...(p.time === null ? {} : { time: p.time }),
  };
}

/** `filterByStatus` and `filterByType` of list_activities: arrays of known values; empty means all. */
function activityFilter(body: Params): ActivityFilter {
  const list = (key: 'filterByStatus' | 'filterByType', ok: (v: string) => boolean, what: string) => {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) throw invalid(key, 'must be an array');
    v.forEach((x, i) => {
      if (typeof x !== 'string' || !ok(x)) throw invalid(`${key}[${i}]`, `must be ${what}`);
    });
    return v.length === 0 ? undefined : (v as string[]);
  };
  return {
    statuses: list(
      'filterByStatus',
      (x) => (ACTIVITY_STATUSES as readonly string[]).includes(x),
      `one of ${ACTIVITY_STATUSES.join(', ')}`,
    ) as ActivityStatus[] | undefined,
    types: list('filterByType', (x) => /^ACTIVITY_TYPE_[A-Z0-9_]{1,80}$/.test(x), 'an ACTIVITY_TYPE_* value'),
  };
}

function pageLimit(body: Params): { limit: number; after?: string; before?: string } {
  const opts = body.paginationOptions;
  if (opts === undefined || opts === null) return { limit: 10 };
  const o = asObject(opts, 'paginationOptions');
  const limitRaw = optString(o, 'limit', 'paginationOptions') ?? '10';
  if (!/^[0-9]+$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100)
    throw invalid('paginationOptions.limit', 'must be a decimal string between 1 and 100');
  const after = optString(o, 'after', 'paginationOptions');
  const before = optString(o, 'before', 'paginationOptions');
  return {
    limit: Number(limitRaw),
    ...(after === undefined || after === '' ? {} : { after }),
    ...(before === undefined || before === '' ? {} : { before }),
  };
}

// --- other resources ---
// Smart contract interfaces, fiat on-ramp credentials (never their secrets), TVC deployments and
// organization features (issue 4); spread into QUERIES below.

function smartContractInterfaceJson(r: SmartContractInterfaceRecord) {
  return {
    organizationId: r.organizationId,
    smartContractInterfaceId: r.id,
    smartContractAddress: r.address,
    smartContractInterface: r.interfaceJson,
    type: r.type,
    label: r.label,
    notes: r.notes,
    createdAt: timestampOf(r.createdAtMs),
    updatedAt: timestampOf(r.updatedAtMs),
  };
}

/** The declared non-secret fields only: the sealed API keys never leave the store. */
function fiatOnRampCredentialJson(r: FiatOnRampCredentialRecord) {
  return {
    fiatOnrampCredentialId: r.id,
    organizationId: r.organizationId,
    onrampProvider: r.provider,
    ...(r.projectId === null ? {} : { projectId: r.projectId }),
    publishableApiKey: r.publishableApiKey,
    sandboxMode: r.sandboxMode,
    createdAt: timestampOf(r.createdAtMs),
    updatedAt: timestampOf(r.updatedAtMs),
  };
}

function tvcDeploymentJson(r: TvcDeploymentRecord) {
  const spec = JSON.parse(r.specJson) as TvcDeploymentSpec;
  const manifest = {
    appId: spec.appId,
    qosVersion: spec.qosVersion,
    nonce: spec.nonce,
    pivot: { digest: spec.expectedPivotDigest, path: spec.pivotPath, args: spec.pivotArgs },
    debugMode: spec.debugMode,
  };
  return {
    id: r.id,
    organizationId: r.organizationId,
    appId: r.appId,
    manifest: {
      id: r.manifestId,
      // proto `bytes`: base64 of the manifest's UTF-8 JSON.
      manifest: Buffer.from(JSON.stringify(manifest)).toString('base64'),
      createdAt: timestampOf(r.createdAtMs),
      updatedAt: timestampOf(r.createdAtMs),
    },
    manifestApprovals: [],
    qosVersion: spec.qosVersion,
    pivotContainer: {
      containerUrl: spec.pivotContainerImageUrl,
      path: spec.pivotPath,
      args: [...spec.pivotArgs],
      hasPullSecret: r.sealedPullSecret !== null,
      healthCheckType: spec.healthCheckType,
      healthCheckPort: spec.healthCheckPort,
      publicIngressPort: spec.publicIngressPort,
    },
    createdAt: timestampOf(r.createdAtMs),
    updatedAt: timestampOf(r.updatedAtMs),
    delete: r.status === 'DELETED',
    debugMode: spec.debugMode,
    ...(spec.replicas === undefined ? {} : { replicas: spec.replicas }),
    ...(spec.instanceSizeCpus === undefined ? {} : { instanceSizeCpus: spec.instanceSizeCpus }),
    ...(spec.instanceSizeRam === undefined ? {} : { instanceSizeRam: spec.instanceSizeRam }),
  };
}

const OTHER_RESOURCE_QUERIES: Record<string, QueryHandler> = {
  get_smart_contract_interface: async (ctx, body) => {
    const id = reqString(body, 'smartContractInterfaceId', 'body');
    const r = isUuid(id) ? await ctx.store.getSmartContractInterface(ctx.organization.id, id) : undefined;
    if (r === undefined) throw notFound('smartContractInterfaceId', 'smart contract interface');
    return { smartContractInterface: smartContractInterfaceJson(r) };
  },
  list_smart_contract_interfaces: async (ctx) => ({
    smartContractInterfaces: (await ctx.store.listSmartContractInterfaces(ctx.organization.id)).map(
      smartContractInterfaceJson,
    ),
  }),
  list_fiat_on_ramp_credentials: async (ctx) => ({
    fiatOnRampCredentials: (await ctx.store.listFiatOnRampCredentials(ctx.organization.id)).map(
      fiatOnRampCredentialJson,
    ),
  }),
  get_tvc_deployment: async (ctx, body) => {
    const id = reqString(body, 'deploymentId', 'body');
    const r = isUuid(id) ? await ctx.store.getTvcDeployment(ctx.organization.id, id) : undefined;
    if (r === undefined) throw notFound('deploymentId', 'TVC deployment');
    return { tvcDeployment: tvcDeploymentJson(r) };
  },
  list_tvc_app_deployments: async (ctx, body) => {
    const appId = reqUuid(body, 'appId', 'body');
    return {
      tvcDeployments: (await ctx.store.listTvcDeployments(ctx.organization.id, appId)).map(tvcDeploymentJson),
    };
  },
  get_organization: async (ctx) => {
    const org = ctx.organization;
    const users = await ctx.store.listUsers(org.id);
    const interfaces = await ctx.store.listSmartContractInterfaces(org.id);
    return {
      organizationData: {
        organizationId: org.id,
        name: org.name,
        users: await Promise.all(users.map(async (u) => userJson(u, await ctx.store.listApiKeys(u.id)))),
        policies: (await ctx.store.listPolicies(org.id)).map(policyJson),
        privateKeys: (await ctx.store.listPrivateKeys(org.id)).map(privateKeyJson),
        wallets: (await ctx.store.listWallets(org.id)).map(walletJson),
        rootQuorum: {
          threshold: org.rootQuorumThreshold,
          userIds: users.filter((u) => u.isRoot).map((u) => u.id),
        },
        features: (await ctx.store.listOrganizationFeatures(org.id)).map((f) => ({
          name: f.name,
          value: f.value,
        })),
        smartContractInterfaceReferences: interfaces.map((r) => ({
          smartContractInterfaceId: r.id,
          smartContractAddress: r.address,
          digest: createHash('sha256').update(r.interfaceJson).digest('hex'),
        })),
      },
    };
  },
};
// --- end other resources ---

// --- users --- (issue 4) users, their credentials and tags; the user JSON of envelope.ts with the
// authenticators, tags and OAuth providers filled in.
function authenticatorJson(a: AuthenticatorRecord) {
  return {
    transports: [],
    attestationType: 'none',
    aaguid: '',
    credentialId: a.credentialId,
    model: '',
    credential: { publicKey: a.publicKey, type: 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR' },
    authenticatorId: a.id,
    authenticatorName: a.name,
    createdAt: timestampOf(a.createdAtMs),
    updatedAt: timestampOf(a.createdAtMs),
  };
}

function oauthProviderJson(o: OAuthProviderRecord) {
  return {
    providerId: o.id,
    providerName: o.name,
    issuer: o.issuer,
    audience: o.audience,
    subject: o.subject,
    createdAt: timestampOf(o.createdAtMs),
    updatedAt: timestampOf(o.createdAtMs),
  };
}

async function fullUserJson(store: Store, u: UserRecord): Promise<Record<string, unknown>> {
  return {
    ...userJson(u, await store.listApiKeys(u.id)),
    authenticators: (await store.listAuthenticators(u.id)).map(authenticatorJson),
    userTags: await store.listUserTagIds(u.id),
    oauthProviders: (await store.listOAuthProviders(u.id)).map(oauthProviderJson),
    mfaPolicies: [],
  };
}

/** The v1ApiKey shape, taken from userJson so both stay one definition. */
function apiKeyJson(u: UserRecord, k: ApiKeyRecord): unknown {
  return (userJson(u, [k]).apiKeys as unknown[])[0];
}

async function userOf(ctx: QueryContext, body: Params, key: string): Promise<UserRecord> {
  const id = reqString(body, key, 'body');
  const u = isUuid(id) ? await ctx.store.getUser(id.toLowerCase()) : undefined;
  if (u === undefined || u.organizationId !== ctx.organization.id) throw notFound(key, 'user');
  return u;
}

const USER_QUERIES: Record<string, QueryHandler> = {
  list_users: async (ctx) => ({
    users: await Promise.all(
      (await ctx.store.listUsers(ctx.organization.id)).map((u) => fullUserJson(ctx.store, u)),
    ),
  }),
  get_user: async (ctx, body) => ({ user: await fullUserJson(ctx.store, await userOf(ctx, body, 'userId')) }),
  list_user_tags: async (ctx) => ({
    userTags: (await ctx.store.listUserTags(ctx.organization.id)).map((t) => ({
      tagId: t.id,
      tagName: t.name,
      tagType: 'TAG_TYPE_USER',
      createdAt: timestampOf(t.createdAtMs),
      updatedAt: timestampOf(t.updatedAtMs),
    })),
  }),
  get_api_keys: async (ctx, body) => {
    const userId = optString(body, 'userId', 'body');
    if (userId !== undefined && userId !== '') {
      const u = await userOf(ctx, body, 'userId');
      return { apiKeys: (await ctx.store.listApiKeys(u.id)).map((k) => apiKeyJson(u, k)) };
    }
    const users = new Map((await ctx.store.listUsers(ctx.organization.id)).map((u) => [u.id, u]));
    const keys = await ctx.store.listApiKeysOfOrganization(ctx.organization.id);
    return {
      apiKeys: keys.flatMap((k) => {
        const u = users.get(k.userId);
        return u === undefined ? [] : [apiKeyJson(u, k)];
      }),
    };
  },
  get_api_key: async (ctx, body) => {
    const id = reqString(body, 'apiKeyId', 'body');
    const k = isUuid(id) ? await ctx.store.getApiKey(ctx.organization.id, id.toLowerCase()) : undefined;
    const u = k === undefined ? undefined : await ctx.store.getUser(k.userId);
    if (k === undefined || u === undefined) throw notFound('apiKeyId', 'API key');
    return { apiKey: apiKeyJson(u, k) };
  },
  get_authenticators: async (ctx, body) => {
    const u = await userOf(ctx, body, 'userId');
    return { authenticators: (await ctx.store.listAuthenticators(u.id)).map(authenticatorJson) };
  },
  get_authenticator: async (ctx, body) => {
    const id = reqUuid(body, 'authenticatorId', 'body').toLowerCase();
    for (const u of await ctx.store.listUsers(ctx.organization.id)) {
      const a = (await ctx.store.listAuthenticators(u.id)).find((x) => x.id === id);
      if (a !== undefined) return { authenticator: authenticatorJson(a) };
    }
    throw notFound('authenticatorId', 'authenticator');
  },
  get_oauth_providers: async (ctx, body) => {
    const userId = optString(body, 'userId', 'body');
    const users =
      userId !== undefined && userId !== ''
        ? [await userOf(ctx, body, 'userId')]
        : await ctx.store.listUsers(ctx.organization.id);
    const out = [];
    for (const u of users) out.push(...(await ctx.store.listOAuthProviders(u.id)).map(oauthProviderJson));
    return { oauthProviders: out };
  },
};
// --- end users ---

// --- sub-organizations and sessions ---
// list_suborgs (turnkey-api.md 2.1): the sub-organizations of the organization named, which is the
// parent (get_organization, in the block above, serves a sub-organization to its parent's keys).
const SUBORG_FILTER_TYPES = [...SUB_ORGANIZATION_FILTER_TYPES, 'OIDC_TOKEN'] as const;

/**
 * The `filterType` / `filterValue` of a sub-organization listing: undefined without a type (a value
 * alone is refused), else the type (one of `allowed`) with the value if one was given.
 */
function subOrganizationFilter<T extends string>(
  body: Params,
  allowed: readonly T[],
  note = '',
): { readonly type: T; readonly value: string | undefined } | undefined {
  const type = optString(body, 'filterType', 'body') || undefined;
  const value = optString(body, 'filterValue', 'body') || undefined;
  if (type === undefined) {
    if (value !== undefined) throw invalid('filterType', 'is required with filterValue');
    return undefined;
  }
  if (!(allowed as readonly string[]).includes(type))
    throw invalid('filterType', `must be one of ${allowed.join(', ')}${note}`);
  return { type: type as T, value };
}

const SUBORG_QUERIES: Record<string, QueryHandler> = {
  list_suborgs: async (ctx, body) => {
    const page = pageLimit(body);
    const filter = subOrganizationFilter(body, SUBORG_FILTER_TYPES);
    if (filter !== undefined) {
      if (filter.value === undefined) throw invalid('filterValue', 'is required with filterType');
      // An OIDC token names someone only once verified against its issuer's keys (no nonce: a lookup
      // has no session key); then the sub-organizations whose users hold its (iss, aud, sub).
      if (filter.type === 'OIDC_TOKEN') {
        const claims = await verifyOrganizationOidcToken({
          store: ctx.store,
          organization: ctx.organization,
          token: filter.value,
          field: 'filterValue',
          nowMs: Date.now(),
        });
        const found = await ctx.store.findOAuthProviderUsers(
          ctx.organization.id,
          claims.issuer,
          claims.audience,
          claims.subject,
        );
        const ids = [...new Set(found.map((f) => f.organizationId))]
          .filter((id) => id !== ctx.organization.id)
          .filter(
            (id) =>
              (page.after === undefined || id > page.after) &&
              (page.before === undefined || id < page.before),
          )
          .sort()
          .slice(0, page.limit);
        return { organizationIds: ids };
      }
    }
    return {
      organizationIds: await ctx.store.listSubOrganizationIds(
        ctx.organization.id,
        filter === undefined
          ? undefined
          : { type: filter.type as SubOrganizationFilterType, value: filter.value as string },
        page,
      ),
    };
  },
};
// --- end sub-organizations and sessions ---

// --- eth send transaction ---
// get_send_transaction_status and get_nonces (issue 5; turnkey-api.md 6.4, Appendix B).
const SEND_QUERIES: Record<string, QueryHandler> = {
  get_send_transaction_status: async (ctx, body) => {
    const id = reqString(body, 'sendTransactionStatusId', 'body');
    const row = await ctx.store.getSendTransaction(ctx.organization.id, id);
    if (row === undefined) throw notFound('sendTransactionStatusId', 'send transaction status');
    const mined = row.blockNumber !== null;
    return {
      txStatus: row.status,
      ...(row.status === 'INCLUDED' || mined ? { eth: { txHash: row.txHash } } : {}),
      ...(row.errorMessage === null
        ? {}
        : {
            error: {
              message: row.errorMessage,
              ...(row.revertChainJson === null
                ? {}
                : { eth: { revertChain: JSON.parse(row.revertChainJson) as unknown } }),
            },
          }),
    };
  },
  get_nonces: async (ctx, body) => {
    const address = reqString(body, 'address', 'body');
    parseAddress(address, 'body.address');
    const caip2 = reqString(body, 'caip2', 'body');
    const chain = sendContextOf(ctx.store).chains.get(caip2);
    if (chain === undefined) throw invalid('body.caip2', `no RPC endpoint is configured for '${caip2}'`);
    const lc = address.toLowerCase() as `0x${string}`;
    // What the next send would take: the allocator never goes below what the chain counts.
    const next = async (key: string, onChain: () => Promise<bigint>) => {
      const [chainNext, stored] = await Promise.all([onChain(), ctx.store.getNextNonce(caip2, key)]);
      return (stored !== undefined && stored > chainNext ? stored : chainNext).toString();
    };
    const [nonce, gasStationNonce] = await Promise.all([
      body.nonce === false ? undefined : next(lc, () => pendingNonce(chain, lc)),
      body.gasStationNonce === true
        ? next(gasStationNonceKey(lc), () => chainGasStationNonce(chain, lc))
        : undefined,
    ]);
    return {
      ...(nonce === undefined ? {} : { nonce }),
      ...(gasStationNonce === undefined ? {} : { gasStationNonce }),
    };
  },
};
// --- end eth send transaction ---

// --- administration --- (issue 10) the organization's configuration, verified sub-organizations and
// private-key tags, as @turnkey/sdk-server's getOrganizationConfigs, getVerifiedSubOrgIds and
// listPrivateKeyTags read them.
const ADMIN_QUERIES: Record<string, QueryHandler> = {
  get_organization_configs: async (ctx) => {
    const org = ctx.organization;
    const users = await ctx.store.listUsers(org.id);
    return {
      configs: {
        features: (await ctx.store.listOrganizationFeatures(org.id)).map((f) => ({
          name: f.name,
          value: f.value,
        })),
        quorum: {
          threshold: org.rootQuorumThreshold,
          userIds: users.filter((u) => u.isRoot).map((u) => u.id),
        },
      },
    };
  },
  // A sub-organization is listed when one of its users proved the contact with a verification
  // token (create_sub_organization, update_user_email, update_user_phone_number) and still has it.
  list_verified_suborgs: async (ctx, body) => {
    const page = pageLimit(body);
    const filter = subOrganizationFilter(body, CONTACT_KINDS, ' (verification covers contacts only)');
    return {
      organizationIds: await ctx.store.listVerifiedSubOrganizationIds(
        ctx.organization.id,
        filter === undefined ? undefined : { kind: filter.type, value: filter.value },
        page,
      ),
    };
  },
  list_app_proofs: async (ctx, body) => {
    const id = reqUuid(body, 'activityId', 'body');
    const a = await ctx.store.getActivity(ctx.organization.id, id.toLowerCase());
    if (a === undefined) throw notFound('activityId', 'activity');
    return { appProofs: a.appProofsJson == null ? [] : (JSON.parse(a.appProofsJson) as unknown[]) };
  },
  list_private_key_tags: async (ctx) => ({
    privateKeyTags: (await ctx.store.listPrivateKeyTags(ctx.organization.id)).map((t) => ({
      tagId: t.id,
      tagName: t.name,
      tagType: 'TAG_TYPE_PRIVATE_KEY',
      createdAt: timestampOf(t.createdAtMs),
      updatedAt: timestampOf(t.updatedAtMs),
    })),
  }),
};
// --- end administration ---

const QUERIES: Record<string, QueryHandler> = {
  ...ADMIN_QUERIES, // --- administration ---
  ...WEBHOOK_QUERIES, // --- webhooks ---
  ...AUTH_PROXY_QUERIES, // --- auth proxy ---
  ...SEND_QUERIES, // --- eth send transaction ---
  ...SUBORG_QUERIES, // --- sub-organizations and sessions ---
  ...USER_QUERIES, // --- users ---
  ...OTHER_RESOURCE_QUERIES, // --- other resources ---
  /**
   * countersign's own query (no Turnkey equivalent): the service's public keys. `signerPublicKey` signs
   * export bundles (their `enclaveQuorumPublic`); pass it to @turnkey/crypto as
   * `dangerouslyOverrideSignerPublicKey`.
   */
  get_service_public_keys: async (ctx) => {
    const signer = await ctx.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
    const notarizer = await ctx.store.getServiceKey(SERVICE_NOTARIZER_KEY_ID);
    if (signer === undefined || notarizer === undefined)
      throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the service has no export signing key');
    return {
      signerPublicKey: signer.publicKey,
      signerCurve: 'CURVE_P256',
      notarizerPublicKey: notarizer.publicKey,
    };
  },
  whoami: async (ctx) => ({
    organizationId: ctx.user.organizationId,
    organizationName: (await ctx.store.getOrganization(ctx.user.organizationId))?.name ?? '',
    userId: ctx.user.id,
    username: ctx.user.name,
  }),
  get_activity: async (ctx, body) => {
    const id = reqUuid(body, 'activityId', 'body');
    const a = await ctx.store.getActivity(ctx.organization.id, id);
    if (a === undefined) throw notFound('activityId', 'activity');
    return activityResponse(a, await votesWithUsers(ctx.store, a.id));
  },
  list_activities: async (ctx, body) => {
    const page = pageLimit(body);
    const list = await ctx.store.listActivities(ctx.organization.id, page, activityFilter(body));
    // A page stops early rather than grow past what one response can carry; the client pages on
    // with `after` (the last id it got), as it does for a full page.
    const activities = [];
    let bytes = 0;
    for (const a of list) {
      bytes += a.intentJson.length + (a.resultJson?.length ?? 0) + 1024;
      if (activities.length > 0 && bytes > MAX_LIST_RESPONSE_BYTES) break;
      activities.push(activityResponse(a, await votesWithUsers(ctx.store, a.id)).activity);
    }
    return { activities };
  },
  list_policies: async (ctx) => ({
    policies: (await ctx.store.listPolicies(ctx.organization.id)).map(policyJson),
  }),
  get_policy: async (ctx, body) => {
    const id = reqString(body, 'policyId', 'body');
    const p = isUuid(id) ? await ctx.store.getPolicy(ctx.organization.id, id) : undefined;
    if (p === undefined) throw notFound('policyId', 'policy');
    return { policy: policyJson(p) };
  },
  get_policy_evaluations: async (ctx, body) => {
    const id = reqUuid(body, 'activityId', 'body');
    const a = await ctx.store.getActivity(ctx.organization.id, id);
    if (a === undefined) throw notFound('activityId', 'activity');
    const list = await ctx.store.listPolicyEvaluations(a.id);
    return {
      policyEvaluations: list.map((e) => ({
        id: e.id,
        activityId: e.activityId,
        organizationId: e.organizationId,
        voteId: e.voteId ?? '',
        outcome: e.outcome,
        policyEvaluations: JSON.parse(e.resultsJson) as unknown,
        createdAt: timestampOf(e.createdAtMs),
      })),
    };
  },
  get_private_key: async (ctx, body) => {
    const id = reqString(body, 'privateKeyId', 'body');
    const k = isUuid(id) ? await ctx.store.getPrivateKey(ctx.organization.id, id) : undefined;
    if (k === undefined) throw notFound('privateKeyId', 'private key');
    return { privateKey: privateKeyJson(k) };
  },
  list_private_keys: async (ctx) => ({
    privateKeys: (await ctx.store.listPrivateKeys(ctx.organization.id)).map(privateKeyJson),
  }),
  get_wallet: async (ctx, body) => {
    const id = reqUuid(body, 'walletId', 'body');
    const w = await ctx.store.getWallet(ctx.organization.id, id);
    if (w === undefined) throw notFound('walletId', 'wallet');
    return { wallet: walletJson(w) };
  },
  list_wallets: async (ctx) => ({
    wallets: (await ctx.store.listWallets(ctx.organization.id)).map(walletJson),
  }),
  list_wallet_accounts: async (ctx, body) => {
    const walletId = optString(body, 'walletId', 'body');
    if (walletId !== undefined && !isUuid(walletId)) throw invalid('walletId', 'must be a UUID');
    const includeDetails = body.includeWalletDetails === true;
    const page = pageLimit(body);
    let wallet: WalletRecord | undefined;
    if (walletId !== undefined) {
      wallet = await ctx.store.getWallet(ctx.organization.id, walletId);
      if (wallet === undefined) throw notFound('walletId', 'wallet');
    }
    const accounts = await ctx.store.listWalletAccounts(ctx.organization.id, walletId, page);
    const wallets = new Map<string, WalletRecord | undefined>();
    const out = [];
    for (const a of accounts) {
      let w: WalletRecord | undefined;
      if (includeDetails) {
        if (!wallets.has(a.walletId))
          wallets.set(a.walletId, await ctx.store.getWallet(ctx.organization.id, a.walletId));
        w = wallets.get(a.walletId);
      }
      out.push(accountJson(a, w));
    }
    return { accounts: out };
  },
  get_wallet_account: async (ctx, body) => {
    const walletId = reqUuid(body, 'walletId', 'body');
    const address = optString(body, 'address', 'body');
    const path = optString(body, 'path', 'body');
    if (address === undefined && path === undefined)
      throw new CountersignError('FIELD_MISSING', 'address: either address or path is required', {
        field: 'address',
      });
    const a =
      address !== undefined
        ? await ctx.store.getWalletAccountByAddress(ctx.organization.id, walletId, address)
        : await ctx.store.getWalletAccountByPath(ctx.organization.id, walletId, path as string);
    if (a === undefined) throw notFound(address !== undefined ? 'address' : 'path', 'wallet account');
    return { account: accountJson(a) };
  },
};

export function queryNames(): string[] {
  return Object.keys(QUERIES);
}

export function runQuery(name: string, ctx: QueryContext, body: Params): Promise<Record<string, unknown>> {
  const q = QUERIES[name];
  if (q === undefined)
    throw new CountersignError('ROUTE_NOT_FOUND', `unknown query '${name}'`, { field: 'path' });
  return q(ctx, body);
}
