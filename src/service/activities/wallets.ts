/** create_wallet, create_wallet_accounts, create_private_keys (V2). */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../../shared/errors.js';
import { bytesToHex, zeroize } from '../../shared/encoding.js';
import {
  ADDRESS_FORMATS,
  CURVES,
  curveFitsFormat,
  deriveAddress,
  derivePrivateKey,
  generateMnemonic,
  generatePrivateKey,
  mnemonicToSeed,
  parseDerivationPath,
  publicKeyOf,
  type AddressFormat,
  type Curve,
  type KeyVault,
} from '../keys/index.js';
import type { PrivateKeyRecord, StoreTx, WalletAccountRecord, WalletRecord } from '../store/types.js';
import {
  asObject,
  notFound,
  optBool,
  optNumber,
  reqArray,
  reqEnum,
  reqString,
  reqUuid,
  stringArray,
  type Params,
} from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

export interface AccountSpec {
  readonly curve: Curve;
  readonly path: string;
  readonly addressFormat: AddressFormat;
}

const MNEMONIC_LENGTHS = [12, 15, 18, 21, 24] as const;

/** Validates one `{curve, pathFormat, path, addressFormat}` entry. */
export function parseAccountSpec(value: unknown, field: string): AccountSpec {
  const a = asObject(value, field);
  const curve = reqEnum(a, 'curve', field, CURVES);
  reqEnum(a, 'pathFormat', field, ['PATH_FORMAT_BIP32'] as const);
  const path = reqString(a, 'path', field);
  parseDerivationPath(path, `${field}.path`);
  const addressFormat = reqEnum(a, 'addressFormat', field, ADDRESS_FORMATS);
  if (!curveFitsFormat(curve, addressFormat))
    throw invalid(`${field}.addressFormat`, `${addressFormat} cannot be derived from a ${curve} key`);
  return { curve, path, addressFormat };
}

/** Validates `accounts`: each entry, and no account twice. */
export function parseAccountSpecs(p: Params, prefix: string): AccountSpec[] {
  const specs = reqArray(p, 'accounts', prefix).map((a, i) => parseAccountSpec(a, `${prefix}.accounts.${i}`));
  const seen = new Set<string>();
  specs.forEach((s, i) => {
    const k = `${s.curve}|${s.path}|${s.addressFormat}`;
    if (seen.has(k))
      throw invalid(`${prefix}.accounts.${i}.path`, 'the same account appears twice in this request');
    seen.add(k);
  });
  return specs;
}

/** Derives accounts from a seed; each derived key is sealed under its account id and wiped. */
export function deriveAccounts(
  vault: KeyVault,
  seed: Uint8Array,
  organizationId: string,
  walletId: string,
  specs: readonly AccountSpec[],
  nowMs: number,
  prefix: string,
): WalletAccountRecord[] {
  return specs.map((spec, i) => {
    const id = randomUUID();
    const priv = derivePrivateKey(seed, spec.curve, spec.path, `${prefix}.accounts.${i}.path`);
    try {
      const pub = publicKeyOf(spec.curve, priv);
      return {
        id,
        organizationId,
        walletId,
        curve: spec.curve,
        pathFormat: 'PATH_FORMAT_BIP32',
        path: spec.path,
        addressFormat: spec.addressFormat,
        address: deriveAddress(spec.curve, pub, spec.addressFormat, `${prefix}.accounts.${i}.addressFormat`),
        publicKey: bytesToHex(pub),
        sealedKey: vault.seal(priv, id),
        createdAtMs: nowMs,
        updatedAtMs: nowMs,
      };
    } finally {
      zeroize(priv);
    }
  });
}

/** Builds a new wallet (mnemonic sealed, accounts derived); used by create_wallet and `init`. */
export function buildWallet(
  vault: KeyVault,
  organizationId: string,
  name: string,
  specs: readonly AccountSpec[],
  mnemonicLength: (typeof MNEMONIC_LENGTHS)[number],
  nowMs: number,
  prefix: string,
): { wallet: WalletRecord; accounts: WalletAccountRecord[] } {
  return buildWalletFromMnemonic({
    vault,
    organizationId,
    name,
    specs,
    mnemonic: generateMnemonic(mnemonicLength),
    imported: false,
    nowMs,
    prefix,
  });
}

/**
 * Builds a wallet from a given BIP-39 mnemonic (checked by the caller): the mnemonic is sealed under
 * the wallet id, the accounts derived and sealed; the seed and mnemonic bytes are zeroed.
 */
export function buildWalletFromMnemonic(input: {
  readonly vault: KeyVault;
  readonly organizationId: string;
  readonly name: string;
  readonly specs: readonly AccountSpec[];
  readonly mnemonic: string;
  readonly imported: boolean;
  readonly nowMs: number;
  readonly prefix: string;
}): { wallet: WalletRecord; accounts: WalletAccountRecord[] } {
  const { vault, organizationId, nowMs } = input;
  const id = randomUUID();
  const mnemonicBytes = new TextEncoder().encode(input.mnemonic);
  const seed = mnemonicToSeed(input.mnemonic);
  try {
    const wallet: WalletRecord = {
      id,
      organizationId,
      name: input.name,
      sealedMnemonic: vault.seal(mnemonicBytes, id),
      exported: false,
      imported: input.imported,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    };
    return {
      wallet,
      accounts: deriveAccounts(vault, seed, organizationId, id, input.specs, nowMs, input.prefix),
    };
  } finally {
    zeroize(seed, mnemonicBytes);
  }
}

export async function insertWallet(
  tx: StoreTx,
  built: { wallet: WalletRecord; accounts: readonly WalletAccountRecord[] },
  nameField: string,
): Promise<void> {
  if (await tx.walletNameTaken(built.wallet.organizationId, built.wallet.name))
    throw new CountersignError('NAME_NOT_UNIQUE', `${nameField}: a wallet with this name already exists`, {
      field: nameField,
    });
  await tx.insertWallet(built.wallet);
  for (const a of built.accounts) await tx.insertWalletAccount(a);
}

const createWallet = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const prefix = 'parameters';
  const walletName = reqString(p, 'walletName', prefix);
  const specs = parseAccountSpecs(p, prefix);
  const length = optNumber(p, 'mnemonicLength', prefix) ?? 12;
  if (!(MNEMONIC_LENGTHS as readonly number[]).includes(length))
    throw invalid(`${prefix}.mnemonicLength`, 'must be one of 12, 15, 18, 21, 24');
  const built = buildWallet(
    ctx.vault,
    ctx.organization.id,
    walletName,
    specs,
    length as (typeof MNEMONIC_LENGTHS)[number],
    ctx.nowMs,
    prefix,
  );
  return {
    result: { walletId: built.wallet.id, addresses: built.accounts.map((a) => a.address) },
    write: async (tx) => insertWallet(tx, built, `${prefix}.walletName`),
  };
};

const createWalletAccounts = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const prefix = 'parameters';
  const walletId = reqUuid(p, 'walletId', prefix);
  const specs = parseAccountSpecs(p, prefix);
  const persist = optBool(p, 'persist', prefix) ?? true;
  const wallet = await ctx.store.getWallet(ctx.organization.id, walletId);
  if (wallet === undefined) throw notFound(`${prefix}.walletId`, 'wallet');
  const mnemonicBytes = ctx.vault.open(wallet.sealedMnemonic, wallet.id);
  const seed = mnemonicToSeed(new TextDecoder().decode(mnemonicBytes));
  let accounts: WalletAccountRecord[];
  try {
    accounts = deriveAccounts(ctx.vault, seed, ctx.organization.id, wallet.id, specs, ctx.nowMs, prefix);
  } finally {
    zeroize(seed, mnemonicBytes);
  }
  const result = { addresses: accounts.map((a) => a.address) };
  if (!persist) return { result };
  return {
    result,
    write: async (tx) => {
      for (const [i, a] of accounts.entries()) {
        if (await tx.walletAccountExists(a.walletId, a.curve, a.path, a.addressFormat))
          throw invalid(
            `${prefix}.accounts.${i}.path`,
            'invalid path: this account already exists in the wallet',
          );
        await tx.insertWalletAccount(a);
      }
    },
  };
};

/** Validates `addressFormats` against the key's curve. */
export function parseAddressFormats(o: Params, curve: Curve, field: string): AddressFormat[] {
  return reqArray(o, 'addressFormats', field).map((f, j) => {
    if (typeof f !== 'string' || !(ADDRESS_FORMATS as readonly string[]).includes(f))
      throw invalid(`${field}.addressFormats.${j}`, `must be one of ${ADDRESS_FORMATS.join(', ')}`);
    if (!curveFitsFormat(curve, f as AddressFormat))
      throw invalid(`${field}.addressFormats.${j}`, `${f} cannot be derived from a ${curve} key`);
    return f as AddressFormat;
  });
}

/**
 * A private key record: the key (a valid scalar for `curve`, checked by the caller) sealed under a
 * fresh id, its addresses derived. The caller zeroes `privateKey`.
 */
export function buildPrivateKey(input: {
  readonly vault: KeyVault;
  readonly organizationId: string;
  readonly name: string;
  readonly curve: Curve;
  readonly privateKey: Uint8Array;
  readonly formats: readonly AddressFormat[];
  readonly tags: readonly string[];
  readonly imported: boolean;
  readonly nowMs: number;
  readonly field: string;
}): PrivateKeyRecord {
  const { curve, field } = input;
  const id = randomUUID();
  const pub = publicKeyOf(curve, input.privateKey);
  return {
    id,
    organizationId: input.organizationId,
    name: input.name,
    curve,
    publicKey: bytesToHex(pub),
    sealedKey: input.vault.seal(input.privateKey, id),
    addresses: input.formats.map((format, j) => ({
      format,
      address: deriveAddress(curve, pub, format, `${field}.addressFormats.${j}`),
    })),
    tags: input.tags,
    exported: false,
    imported: input.imported,
    createdAtMs: input.nowMs,
    updatedAtMs: input.nowMs,
  };
}

const createPrivateKeys = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const prefix = 'parameters';
  const entries = reqArray(p, 'privateKeys', prefix);
  if (entries.length === 0) throw invalid(`${prefix}.privateKeys`, 'must hold at least one private key');
  const names = new Set<string>();
  const records: PrivateKeyRecord[] = entries.map((e, i) => {
    const field = `${prefix}.privateKeys.${i}`;
    const o = asObject(e, field);
    const name = reqString(o, 'privateKeyName', field);
    if (names.has(name))
      throw new CountersignError('NAME_NOT_UNIQUE', `${field}.privateKeyName: This field must be unique.`, {
        field: `${field}.privateKeyName`,
      });
    names.add(name);
    const curve = reqEnum(o, 'curve', field, CURVES);
    const tags = stringArray(reqArray(o, 'privateKeyTags', field), `${field}.privateKeyTags`);
    const formats = parseAddressFormats(o, curve, field);
    const priv = generatePrivateKey(curve);
    try {
      return buildPrivateKey({
        vault: ctx.vault,
        organizationId: ctx.organization.id,
        name,
        curve,
        privateKey: priv,
        formats,
        tags,
        imported: false,
        nowMs: ctx.nowMs,
        field,
      });
    } finally {
      zeroize(priv);
    }
  });
  return {
    result: {
      privateKeys: records.map((r) => ({
        privateKeyId: r.id,
        addresses: r.addresses.map((a) => ({ format: a.format, address: a.address })),
      })),
    },
    write: async (tx) => {
      for (const [i, r] of records.entries()) {
        if (await tx.privateKeyNameTaken(r.organizationId, r.name)) {
          const field = `${prefix}.privateKeys.${i}.privateKeyName`;
          throw new CountersignError('NAME_NOT_UNIQUE', `${field}: This field must be unique.`, { field });
        }
        await tx.insertPrivateKey(r);
      }
    },
  };
};

export const WALLET_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_CREATE_WALLET',
    path: 'create_wallet',
    intentKey: 'createWalletIntent',
    resultKey: 'createWalletResult',
    run: createWallet,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS',
    path: 'create_wallet_accounts',
    intentKey: 'createWalletAccountsIntent',
    resultKey: 'createWalletAccountsResult',
    run: createWalletAccounts,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
    path: 'create_private_keys',
    intentKey: 'createPrivateKeysIntentV2',
    resultKey: 'createPrivateKeysResultV2',
    run: createPrivateKeys,
  },
];
