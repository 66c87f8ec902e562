/**
 * Everyday administration that Turnkey's clients expose beyond the seed: the root quorum, names of
 * the organization and its wallets, batch deletions (policies, wallet accounts, private keys), the
 * deletion of a sub-organization, and private-key tags. Each refuses an unknown id by its field and
 * re-checks inside the write, so a race never leaves half a change.
 */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../../shared/errors.js';
import type { PrivateKeyTagRecord, StoreTx } from '../store/types.js';
import {
  notFound,
  optArray,
  optBool,
  optString,
  reqArray,
  reqString,
  reqUuid,
  type Params,
} from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';
import { nonEmpty, uuidList } from './users.js';

const PREFIX = 'parameters';

function notUnique(field: string, what: string): CountersignError {
  return new CountersignError('NAME_NOT_UNIQUE', `${field}: ${what} with this name already exists`, {
    field,
  });
}

/** A non-blank name parameter, as given. */
function reqName(p: Params, key: string): string {
  const name = reqString(p, key, PREFIX);
  if (name.trim() === '') throw invalid(`${PREFIX}.${key}`, 'must not be empty');
  return name;
}

/** Ids of `key`: at least one, distinct UUIDs (lower-cased). */
function idList(p: Params, key: string, what: string): string[] {
  const field = `${PREFIX}.${key}`;
  return uuidList(nonEmpty(reqArray(p, key, PREFIX), field, `${what} id`), field, what);
}

function notExported(field: string, what: string): CountersignError {
  return invalid(
    field,
    `${what} has not been exported; export it first or set deleteWithoutExport to delete it anyway`,
    'WALLET_NOT_EXPORTED',
  );
}

// ---- the organization ----

const updateRootQuorum = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.userIds`;
  const userIds = idList(p, 'userIds', 'user');
  const tField = `${PREFIX}.threshold`;
  const t = p.threshold;
  if (t === undefined || t === null)
    throw new CountersignError('FIELD_MISSING', `${tField}: is required`, { field: tField });
  if (typeof t !== 'number' || !Number.isInteger(t)) throw invalid(tField, 'must be an integer');
  if (t < 1 || t > userIds.length)
    throw invalid(tField, `must be between 1 and the number of userIds (${userIds.length})`);
  const org = ctx.organization.id;
  return {
    result: {},
    write: async (tx) => {
      const members = new Set((await tx.listUsersOfOrganization(org)).map((u) => u.id));
      userIds.forEach((id, i) => {
        if (!members.has(id)) throw notFound(`${field}.${i}`, 'user');
      });
      await tx.setRootQuorum(org, t, userIds);
    },
  };
};

const updateOrganizationName = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const name = reqName(p, 'organizationName');
  const org = ctx.organization;
  return {
    result: { organizationId: org.id, organizationName: name },
    write: async (tx) => {
      // Sub-organization names are unique under their parent (create_sub_organization checks it too).
      if (
        org.parentId !== null &&
        name !== org.name &&
        (await tx.subOrganizationNameTaken(org.parentId, name))
      )
        throw notUnique(`${PREFIX}.organizationName`, 'a sub-organization');
      if (!(await tx.renameOrganization(org.id, name))) throw notFound('organizationId', 'organization');
    },
  };
};

/**
 * Deletes the sub-organization the request is addressed to, by its own users. Refused for a top-level
 * organization, and while it holds keys never exported unless deleteWithoutExport says so.
 */
const deleteSubOrganization = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const org = ctx.organization;
  if (org.parentId === null)
    throw invalid('organizationId', 'is not a sub-organization; only a sub-organization can be deleted');
  const anyway = optBool(p, 'deleteWithoutExport', PREFIX) ?? false;
  const check = (wallets: readonly { exported: boolean }[], keys: readonly { exported: boolean }[]): void => {
    if (anyway) return;
    if (wallets.some((w) => !w.exported))
      throw notExported(`${PREFIX}.deleteWithoutExport`, 'a wallet of the sub-organization');
    if (keys.some((k) => !k.exported))
      throw notExported(`${PREFIX}.deleteWithoutExport`, 'a private key of the sub-organization');
  };
  check(await ctx.store.listWallets(org.id), await ctx.store.listPrivateKeys(org.id));
  return {
    result: { subOrganizationUuid: org.id },
    write: async (tx) => {
      if (!(await tx.deleteOrganization(org.id, ctx.nowMs)))
        throw notFound('organizationId', 'sub-organization');
    },
  };
};

// ---- wallets and private keys ----

const updateWallet = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const id = reqUuid(p, 'walletId', PREFIX).toLowerCase();
  const name = optString(p, 'walletName', PREFIX);
  if (name !== undefined && name.trim() === '') throw invalid(`${PREFIX}.walletName`, 'must not be empty');
  const org = ctx.organization.id;
  return {
    result: { walletId: id },
    write: async (tx) => {
      const w = await tx.getWallet(org, id);
      if (w === undefined) throw notFound(`${PREFIX}.walletId`, 'wallet');
      if (name === undefined || name === w.name) return;
      if (await tx.walletNameTaken(org, name)) throw notUnique(`${PREFIX}.walletName`, 'a wallet');
      await tx.renameWallet(org, id, name, ctx.nowMs);
    },
  };
};

/** An account counts as exported when its wallet was (export_wallet_account marks the wallet). */
const deleteWalletAccounts = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.walletAccountIds`;
  const ids = idList(p, 'walletAccountIds', 'wallet account');
  const anyway = optBool(p, 'deleteWithoutExport', PREFIX) ?? false;
  const org = ctx.organization.id;
  const check = async (tx: StoreTx): Promise<void> => {
    for (const [i, id] of ids.entries()) {
      const a = await tx.getWalletAccount(org, id);
      if (a === undefined) throw notFound(`${field}.${i}`, 'wallet account');
      if (!anyway && (await tx.getWallet(org, a.walletId))?.exported !== true)
        throw notExported(`${field}.${i}`, 'wallet account');
    }
  };
  return {
    result: { walletAccountIds: ids },
    write: async (tx) => {
      await check(tx);
      for (const [i, id] of ids.entries()) {
        if (!(await tx.deleteWalletAccount(org, id))) throw notFound(`${field}.${i}`, 'wallet account');
      }
    },
  };
};

const deletePrivateKeys = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.privateKeyIds`;
  const ids = idList(p, 'privateKeyIds', 'private key');
  const anyway = optBool(p, 'deleteWithoutExport', PREFIX) ?? false;
  const org = ctx.organization.id;
  const check = (i: number, k: { exported: boolean } | undefined): void => {
    if (k === undefined) throw notFound(`${field}.${i}`, 'private key');
    if (!anyway && !k.exported) throw notExported(`${field}.${i}`, 'private key');
  };
  for (const [i, id] of ids.entries()) check(i, await ctx.store.getPrivateKey(org, id));
  return {
    result: { privateKeyIds: ids },
    write: async (tx) => {
      for (const [i, id] of ids.entries()) {
        check(i, await tx.getPrivateKey(org, id));
        await tx.deletePrivateKey(org, id);
      }
    },
  };
};

const createPrivateKeyTag = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const name = reqName(p, 'privateKeyTagName');
  const field = `${PREFIX}.privateKeyIds`;
  const keyIds = uuidList(reqArray(p, 'privateKeyIds', PREFIX), field, 'private key');
  const org = ctx.organization.id;
  const tag: PrivateKeyTagRecord = {
    id: randomUUID(),
    organizationId: org,
    name,
    createdAtMs: ctx.nowMs,
    updatedAtMs: ctx.nowMs,
  };
  return {
    result: { privateKeyTagId: tag.id, privateKeyIds: keyIds },
    write: async (tx) => {
      if (await tx.privateKeyTagNameTaken(org, name))
        throw notUnique(`${PREFIX}.privateKeyTagName`, 'a private key tag');
      for (const [i, id] of keyIds.entries()) {
        if ((await tx.getPrivateKey(org, id)) === undefined) throw notFound(`${field}.${i}`, 'private key');
      }
      await tx.insertPrivateKeyTag(tag);
      for (const id of keyIds) await tx.tagPrivateKey(org, id, tag.id, ctx.nowMs);
    },
  };
};

const updatePrivateKeyTag = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const id = reqUuid(p, 'privateKeyTagId', PREFIX).toLowerCase();
  const newName = optString(p, 'newPrivateKeyTagName', PREFIX);
  if (newName !== undefined && newName.trim() === '')
    throw invalid(`${PREFIX}.newPrivateKeyTagName`, 'must not be empty');
  const addField = `${PREFIX}.addPrivateKeyIds`;
  const removeField = `${PREFIX}.removePrivateKeyIds`;
  const add = uuidList(optArray(p, 'addPrivateKeyIds', PREFIX) ?? [], addField, 'private key');
  const remove = uuidList(optArray(p, 'removePrivateKeyIds', PREFIX) ?? [], removeField, 'private key');
  remove.forEach((k, i) => {
    if (add.includes(k))
      throw invalid(`${removeField}.${i}`, 'the same private key is also in addPrivateKeyIds');
  });
  const org = ctx.organization.id;
  return {
    result: { privateKeyTagId: id },
    write: async (tx) => {
      const tag = await tx.getPrivateKeyTag(org, id);
      if (tag === undefined) throw notFound(`${PREFIX}.privateKeyTagId`, 'private key tag');
      if (newName !== undefined && newName !== tag.name) {
        if (await tx.privateKeyTagNameTaken(org, newName))
          throw notUnique(`${PREFIX}.newPrivateKeyTagName`, 'a private key tag');
        await tx.renamePrivateKeyTag(org, id, newName, ctx.nowMs);
      }
      const each = async (
        ids: readonly string[],
        field: string,
        fn: (k: string) => Promise<void>,
      ): Promise<void> => {
        for (const [i, k] of ids.entries()) {
          if ((await tx.getPrivateKey(org, k)) === undefined) throw notFound(`${field}.${i}`, 'private key');
          await fn(k);
        }
      };
      await each(add, addField, (k) => tx.tagPrivateKey(org, k, id, ctx.nowMs));
      await each(remove, removeField, (k) => tx.untagPrivateKey(org, k, id, ctx.nowMs));
    },
  };
};

const deletePrivateKeyTags = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.privateKeyTagIds`;
  const ids = idList(p, 'privateKeyTagIds', 'private key tag');
  const org = ctx.organization.id;
  const existing = new Set((await ctx.store.listPrivateKeyTags(org)).map((t) => t.id));
  ids.forEach((id, i) => {
    if (!existing.has(id)) throw notFound(`${field}.${i}`, 'private key tag');
  });
  // The keys that carry any of the tags, read before the write (the result is recorded with it).
  const doomed = new Set(ids);
  const privateKeyIds = (await ctx.store.listPrivateKeys(org))
    .filter((k) => k.tags.some((t) => doomed.has(t)))
    .map((k) => k.id);
  return {
    result: { privateKeyTagIds: ids, privateKeyIds },
    write: async (tx) => {
      for (const [i, id] of ids.entries()) {
        if ((await tx.deletePrivateKeyTag(org, id, ctx.nowMs)) === null)
          throw notFound(`${field}.${i}`, 'private key tag');
      }
    },
  };
};

// ---- policies ----

const deletePolicies = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.policyIds`;
  const ids = idList(p, 'policyIds', 'policy');
  const org = ctx.organization.id;
  return {
    result: { policyIds: ids },
    write: async (tx) => {
      for (const [i, id] of ids.entries()) {
        if (!(await tx.deletePolicy(org, id))) throw notFound(`${field}.${i}`, 'policy');
      }
    },
  };
};

export const ADMIN_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM',
    path: 'update_root_quorum',
    intentKey: 'updateRootQuorumIntent',
    resultKey: 'updateRootQuorumResult',
    run: updateRootQuorum,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME',
    path: 'update_organization_name',
    intentKey: 'updateOrganizationNameIntent',
    resultKey: 'updateOrganizationNameResult',
    run: updateOrganizationName,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION',
    path: 'delete_sub_organization',
    intentKey: 'deleteSubOrganizationIntent',
    resultKey: 'deleteSubOrganizationResult',
    run: deleteSubOrganization,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_WALLET',
    path: 'update_wallet',
    intentKey: 'updateWalletIntent',
    resultKey: 'updateWalletResult',
    run: updateWallet,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_WALLET_ACCOUNTS',
    path: 'delete_wallet_accounts',
    intentKey: 'deleteWalletAccountsIntent',
    resultKey: 'deleteWalletAccountsResult',
    run: deleteWalletAccounts,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_PRIVATE_KEYS',
    path: 'delete_private_keys',
    intentKey: 'deletePrivateKeysIntent',
    resultKey: 'deletePrivateKeysResult',
    run: deletePrivateKeys,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG',
    path: 'create_private_key_tag',
    intentKey: 'createPrivateKeyTagIntent',
    resultKey: 'createPrivateKeyTagResult',
    run: createPrivateKeyTag,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG',
    path: 'update_private_key_tag',
    intentKey: 'updatePrivateKeyTagIntent',
    resultKey: 'updatePrivateKeyTagResult',
    run: updatePrivateKeyTag,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS',
    path: 'delete_private_key_tags',
    intentKey: 'deletePrivateKeyTagsIntent',
    resultKey: 'deletePrivateKeyTagsResult',
    run: deletePrivateKeyTags,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_POLICIES',
    path: 'delete_policies',
    intentKey: 'deletePoliciesIntent',
    resultKey: 'deletePoliciesResult',
    run: deletePolicies,
  },
];
