/** `POST /public/v1/query/<name>`: reads within the caller's organization (or a sub-organization). */
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
} from '../store/types.js';
import { SERVICE_SIGNER_KEY_ID } from '../keys/index.js';
import { activityResponse, timestampOf, userJson, type VoteWithUser } from './envelope.js';

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

const QUERIES: Record<string, QueryHandler> = {
  /**
   * countersign's own query (no Turnkey equivalent): the service's public keys. `signerPublicKey` signs
   * export bundles (their `enclaveQuorumPublic`); pass it to @turnkey/crypto as
   * `dangerouslyOverrideSignerPublicKey`.
   */
  get_service_public_keys: async (ctx) => {
    const signer = await ctx.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
    if (signer === undefined)
      throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the service has no export signing key');
    return { signerPublicKey: signer.publicKey, signerCurve: 'CURVE_P256' };
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
    const list = await ctx.store.listActivities(ctx.organization.id, page);
    return {
      activities: await Promise.all(
        list.map(async (a) => activityResponse(a, await votesWithUsers(ctx.store, a.id)).activity),
      ),
    };
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

export function isQuery(name: string): boolean {
  return Object.hasOwn(QUERIES, name);
}

export function runQuery(name: string, ctx: QueryContext, body: Params): Promise<Record<string, unknown>> {
  const q = QUERIES[name];
  if (q === undefined)
    throw new CountersignError('ROUTE_NOT_FOUND', `unknown query '${name}'`, { field: 'path' });
  return q(ctx, body);
}
