/**
 * export_wallet_account, export_wallet, export_private_key (HPKE export bundles, turnkey-api.md 9.5)
 * and delete_wallets, which refuses wallets that were never exported unless told otherwise (7).
 */
import { CountersignError, invalid } from '../../shared/errors.js';
import { bytesToHex, hexToBytes, zeroize } from '../../shared/encoding.js';
import { assertP256UncompressedPublicKey, sealToTurnkeyTarget } from '../keys/index.js';
import type { WalletFacts } from '../policy/index.js';
import type { PrivateKeyRecord, WalletAccountRecord, WalletRecord } from '../store/types.js';
import { isUuid, notFound, optBool, optString, reqArray, reqString, reqUuid, type Params } from './params.js';
import { signedBundle } from './signedBundle.js';
import type { ActivityContext, ActivityDefinition, ActivityFacts, ActivityOutcome } from './types.js';

const PREFIX = 'parameters';

/** Only English mnemonics are generated and stored; Turnkey's other languages are refused by name. */
const MNEMONIC_LANGUAGE_ENGLISH = 'MNEMONIC_LANGUAGE_ENGLISH';

function parseTargetPublicKey(p: Params): Uint8Array {
  const field = `${PREFIX}.targetPublicKey`;
  const key = hexToBytes(reqString(p, 'targetPublicKey', PREFIX), field);
  assertP256UncompressedPublicKey(key, field);
  return key;
}

function walletFacts(w: WalletRecord): WalletFacts {
  return { id: w.id, label: w.name, imported: w.imported, exported: w.exported };
}

/**
 * Encrypts `plaintext` to the target key and wraps it as Turnkey's signed bundle whose data is
 * `{encappedPublic, ciphertext, organizationId}`.
 */
async function exportBundle(
  ctx: ActivityContext,
  targetPublicKey: Uint8Array,
  plaintext: Uint8Array,
): Promise<string> {
  const sealed = sealToTurnkeyTarget({ targetPublicKey, plaintext });
  return signedBundle(ctx, {
    encappedPublic: bytesToHex(sealed.encappedPublic),
    ciphertext: bytesToHex(sealed.ciphertext),
    organizationId: ctx.organization.id,
  });
}

/** Opens a sealed record, seals the plaintext into a bundle, and zeroes the plaintext. */
async function exportSealed(
  ctx: ActivityContext,
  targetPublicKey: Uint8Array,
  sealed: Uint8Array,
  recordId: string,
): Promise<string> {
  const plaintext = ctx.vault.open(sealed, recordId);
  try {
    return await exportBundle(ctx, targetPublicKey, plaintext);
  } finally {
    zeroize(plaintext);
  }
}

// ---- export_wallet_account ----

async function findAccount(ctx: ActivityContext, p: Params): Promise<WalletAccountRecord> {
  const field = `${PREFIX}.address`;
  const address = reqString(p, 'address', PREFIX);
  const rec = await ctx.store.resolveSigningKey(ctx.organization.id, address);
  if (rec === undefined || rec.kind !== 'wallet_account' || rec.walletId === null)
    throw new CountersignError('RESOURCE_NOT_FOUND', `${field}: no wallet account found with this address`, {
      field,
    });
  const account = await ctx.store.getWalletAccountByAddress(ctx.organization.id, rec.walletId, address);
  if (account === undefined)
    throw new CountersignError('RESOURCE_NOT_FOUND', `${field}: no wallet account found with this address`, {
      field,
    });
  return account;
}

const exportWalletAccountFacts = async (ctx: ActivityContext, p: Params): Promise<ActivityFacts> => {
  parseTargetPublicKey(p);
  const account = await findAccount(ctx, p);
  const wallet = await ctx.store.getWallet(ctx.organization.id, account.walletId);
  return {
    ...(wallet === undefined ? {} : { wallet: walletFacts(wallet) }),
    walletAccount: { address: account.address },
  };
};

const exportWalletAccount = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const target = parseTargetPublicKey(p);
  const account = await findAccount(ctx, p);
  const bundle = await exportSealed(ctx, target, account.sealedKey, account.id);
  return {
    result: { address: account.address, exportBundle: bundle },
    write: async (tx) => {
      // The wallet holding the exported key counts as exported (delete_wallets checks this flag).
      if (!(await tx.markWalletExported(ctx.organization.id, account.walletId, ctx.nowMs)))
        throw notFound(`${PREFIX}.address`, 'wallet account');
    },
  };
};

// ---- export_wallet ----

async function findWallet(ctx: ActivityContext, p: Params): Promise<WalletRecord> {
  const walletId = reqUuid(p, 'walletId', PREFIX);
  const wallet = await ctx.store.getWallet(ctx.organization.id, walletId);
  if (wallet === undefined) throw notFound(`${PREFIX}.walletId`, 'wallet');
  return wallet;
}

function checkLanguage(p: Params): void {
  const language = optString(p, 'language', PREFIX);
  if (language !== undefined && language !== MNEMONIC_LANGUAGE_ENGLISH)
    throw invalid(
      `${PREFIX}.language`,
      `only ${MNEMONIC_LANGUAGE_ENGLISH} is supported (wallets hold English mnemonics); got '${language}'`,
    );
}

const exportWalletFacts = async (ctx: ActivityContext, p: Params): Promise<ActivityFacts> => {
  parseTargetPublicKey(p);
  checkLanguage(p);
  return { wallet: walletFacts(await findWallet(ctx, p)) };
};

const exportWallet = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const target = parseTargetPublicKey(p);
  checkLanguage(p);
  const wallet = await findWallet(ctx, p);
  // The plaintext is the mnemonic's UTF-8 bytes (no passphrase: wallets here have none).
  const bundle = await exportSealed(ctx, target, wallet.sealedMnemonic, wallet.id);
  return {
    result: { walletId: wallet.id, exportBundle: bundle },
    write: async (tx) => {
      if (!(await tx.markWalletExported(ctx.organization.id, wallet.id, ctx.nowMs)))
        throw notFound(`${PREFIX}.walletId`, 'wallet');
    },
  };
};

// ---- export_private_key ----

async function findPrivateKey(ctx: ActivityContext, p: Params): Promise<PrivateKeyRecord> {
  const id = reqUuid(p, 'privateKeyId', PREFIX);
  const key = await ctx.store.getPrivateKey(ctx.organization.id, id);
  if (key === undefined) throw notFound(`${PREFIX}.privateKeyId`, 'private key');
  return key;
}

const exportPrivateKeyFacts = async (ctx: ActivityContext, p: Params): Promise<ActivityFacts> => {
  parseTargetPublicKey(p);
  const k = await findPrivateKey(ctx, p);
  return {
    privateKey: { id: k.id, label: k.name, tags: k.tags, imported: k.imported, exported: k.exported },
  };
};

const exportPrivateKey = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const target = parseTargetPublicKey(p);
  const key = await findPrivateKey(ctx, p);
  const bundle = await exportSealed(ctx, target, key.sealedKey, key.id);
  return {
    result: { privateKeyId: key.id, exportBundle: bundle },
    write: async (tx) => {
      if (!(await tx.markPrivateKeyExported(ctx.organization.id, key.id, ctx.nowMs)))
        throw notFound(`${PREFIX}.privateKeyId`, 'private key');
    },
  };
};

// ---- delete_wallets ----

interface DeleteRequest {
  readonly walletIds: readonly string[];
  readonly deleteWithoutExport: boolean;
}

function parseDelete(p: Params): DeleteRequest {
  const field = `${PREFIX}.walletIds`;
  const raw = reqArray(p, 'walletIds', PREFIX);
  if (raw.length === 0) throw invalid(field, 'must hold at least one wallet id');
  const seen = new Set<string>();
  const walletIds = raw.map((v, i) => {
    if (typeof v !== 'string' || !isUuid(v)) throw invalid(`${field}.${i}`, 'must be a UUID');
    const id = v.toLowerCase();
    if (seen.has(id)) throw invalid(`${field}.${i}`, 'the same wallet appears twice in this request');
    seen.add(id);
    return v;
  });
  return { walletIds, deleteWithoutExport: optBool(p, 'deleteWithoutExport', PREFIX) ?? false };
}

function notExported(index: number): CountersignError {
  const field = `${PREFIX}.walletIds.${index}`;
  return invalid(
    field,
    'wallet account has not been exported; export it first or set deleteWithoutExport to delete it anyway',
    'WALLET_NOT_EXPORTED',
  );
}

/** Every named wallet, in request order; refuses unknown ones and (unless allowed) unexported ones. */
async function walletsToDelete(ctx: ActivityContext, req: DeleteRequest): Promise<WalletRecord[]> {
  const wallets: WalletRecord[] = [];
  for (const [i, id] of req.walletIds.entries()) {
    const w = await ctx.store.getWallet(ctx.organization.id, id);
    if (w === undefined) throw notFound(`${PREFIX}.walletIds.${i}`, 'wallet');
    if (!w.exported && !req.deleteWithoutExport) throw notExported(i);
    wallets.push(w);
  }
  return wallets;
}

const deleteWalletsFacts = async (ctx: ActivityContext, p: Params): Promise<ActivityFacts> => {
  const wallets = await walletsToDelete(ctx, parseDelete(p));
  return { wallets: wallets.map(walletFacts) };
};

const deleteWallets = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const req = parseDelete(p);
  const wallets = await walletsToDelete(ctx, req);
  return {
    result: { walletIds: wallets.map((w) => w.id) },
    // One transaction with the activity record: a wallet that vanished or changed since the check
    // rolls back every deletion, so nothing is left half-deleted.
    write: async (tx) => {
      for (const [i, w] of wallets.entries()) {
        const now = await tx.getWallet(ctx.organization.id, w.id);
        if (now === undefined) throw notFound(`${PREFIX}.walletIds.${i}`, 'wallet');
        if (!now.exported && !req.deleteWithoutExport) throw notExported(i);
        if (!(await tx.deleteWallet(ctx.organization.id, w.id)))
          throw notFound(`${PREFIX}.walletIds.${i}`, 'wallet');
      }
    },
  };
};

export const EXPORT_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT',
    path: 'export_wallet_account',
    intentKey: 'exportWalletAccountIntent',
    resultKey: 'exportWalletAccountResult',
    run: exportWalletAccount,
    facts: exportWalletAccountFacts,
  },
  {
    type: 'ACTIVITY_TYPE_EXPORT_WALLET',
    path: 'export_wallet',
    intentKey: 'exportWalletIntent',
    resultKey: 'exportWalletResult',
    run: exportWallet,
    facts: exportWalletFacts,
  },
  {
    type: 'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY',
    path: 'export_private_key',
    intentKey: 'exportPrivateKeyIntent',
    resultKey: 'exportPrivateKeyResult',
    run: exportPrivateKey,
    facts: exportPrivateKeyFacts,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_WALLETS',
    path: 'delete_wallets',
    intentKey: 'deleteWalletsIntent',
    resultKey: 'deleteWalletsResult',
    run: deleteWallets,
    facts: deleteWalletsFacts,
  },
];
