/**
 * init_import_wallet, import_wallet, init_import_private_key, import_private_key (turnkey-api.md 9.5).
 *
 * init_* hands the user a fresh P-256 target key in a bundle signed by the service signer key (the
 * key clients pin with @turnkey/crypto's `dangerouslyOverrideSignerPublicKey`); its private half is
 * sealed at rest and bound to (organization, user, kind). import_* opens the client's HPKE bundle
 * with one of that user's open targets, checks the mnemonic or key, and in one write consumes the
 * target and stores the wallet or key (sealed, `imported`). Nothing here logs what it decrypts.
 */
import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { bytesToHex, equalBytes, hexToBytes, utf8, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid, isCountersignError } from '../../shared/errors.js';
import { parseJsonStrict } from '../../shared/parseJsonStrict.js';
import { isValidPrivateKey as isValidSecp256k1Key } from '../../shared/secp256k1.js';
import {
  CURVES,
  MNEMONIC_LENGTHS,
  assertNever,
  assertP256UncompressedPublicKey,
  generateServiceKey,
  openFromTurnkeySender,
  validateMnemonic,
  type Curve,
} from '../keys/index.js';
import type { ImportTargetKind, ImportTargetRecord, PrivateKeyRecord, StoreTx } from '../store/types.js';
import { asObject, reqEnum, reqString, reqUuid, type Params } from './params.js';
import { signedBundle } from './signedBundle.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';
import {
  buildPrivateKey,
  buildWalletFromMnemonic,
  insertWallet,
  parseAccountSpecs,
  parseAddressFormats,
} from './wallets.js';

const PREFIX = 'parameters';
const BUNDLE_FIELD = `${PREFIX}.encryptedBundle`;

/**
 * How long a target stays usable. Long enough for an import that waits on root-quorum approvals,
 * short enough that an abandoned target does not stay decryptable for ever.
 */
export const IMPORT_TARGET_TTL_MS = 24 * 60 * 60 * 1000;
/** Open targets kept per (user, kind); an init beyond this drops the oldest open one. */
export const MAX_OPEN_IMPORT_TARGETS = 10;
/** The longest ciphertext accepted: a 24-word mnemonic is under 256 bytes, a key 32 (plus the tag). */
const MAX_CIPHERTEXT_BYTES = 1024;

const INIT_PATH: Readonly<Record<ImportTargetKind, string>> = {
  WALLET: 'init_import_wallet',
  PRIVATE_KEY: 'init_import_private_key',
};

/** The intent's userId: the caller itself, since a target is bound to the user who initialized it. */
function checkUserId(ctx: ActivityContext, p: Params): void {
  const userId = reqUuid(p, 'userId', PREFIX);
  if (userId.toLowerCase() !== ctx.user.id.toLowerCase())
    throw invalid(
      `${PREFIX}.userId`,
      'must be the id of the user making this request: import targets are bound to the user who initializes and uses them',
    );
}

// ---- init_import_wallet / init_import_private_key ----

/** A fresh target for `kind`, its importBundle signed with `{organizationId, userId, targetPublic}`. */
function initImport(kind: ImportTargetKind) {
  return async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
    checkUserId(ctx, p);
    const id = randomUUID();
    // Same shape as a service key: a P-256 scalar sealed under its record id, public key uncompressed.
    const key = generateServiceKey(ctx.vault, id);
    const importBundle = await signedBundle(ctx, {
      organizationId: ctx.organization.id,
      userId: ctx.user.id,
      targetPublic: key.publicKey,
    });
    const record: ImportTargetRecord = {
      id,
      organizationId: ctx.organization.id,
      userId: ctx.user.id,
      kind,
      publicKey: key.publicKey,
      sealedKey: key.sealedKey,
      expiresAtMs: ctx.nowMs + IMPORT_TARGET_TTL_MS,
      createdAtMs: ctx.nowMs,
      consumedAtMs: null,
      consumedEnc: null,
    };
    return {
      result: { importBundle },
      write: async (tx) => {
        await tx.pruneImportTargets(
          ctx.organization.id,
          ctx.user.id,
          kind,
          MAX_OPEN_IMPORT_TARGETS - 1,
          ctx.nowMs,
        );
        await tx.insertImportTarget(record);
      },
    };
  };
}

// ---- the encrypted bundle ----

interface EncryptedBundle {
  readonly encappedPublic: Uint8Array;
  /** `encappedPublic` as lower-case hex: the bundle's identity for replay detection. */
  readonly encHex: string;
  readonly ciphertext: Uint8Array;
}

/** Parses `{encappedPublic, ciphertext}` (hex), what @turnkey/crypto's encrypt*ToBundle return. */
function parseEncryptedBundle(p: Params): EncryptedBundle {
  const raw = reqString(p, 'encryptedBundle', PREFIX);
  let parsed: unknown;
  try {
    parsed = parseJsonStrict(utf8(raw), { maxDepth: 2 });
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw invalid(
      BUNDLE_FIELD,
      'must be the JSON {encappedPublic, ciphertext} that encryptWalletToBundle / encryptPrivateKeyToBundle return',
    );
  }
  const o = asObject(parsed, BUNDLE_FIELD);
  const encField = `${BUNDLE_FIELD}.encappedPublic`;
  const encappedPublic = hexToBytes(reqString(o, 'encappedPublic', BUNDLE_FIELD), encField);
  assertP256UncompressedPublicKey(encappedPublic, encField);
  const ctField = `${BUNDLE_FIELD}.ciphertext`;
  const ciphertext = hexToBytes(reqString(o, 'ciphertext', BUNDLE_FIELD), ctField);
  if (ciphertext.length <= 16) throw invalid(ctField, 'is shorter than an AES-GCM tag plus one byte');
  if (ciphertext.length > MAX_CIPHERTEXT_BYTES)
    throw invalid(ctField, `is longer than any mnemonic or key (${MAX_CIPHERTEXT_BYTES} bytes at most)`);
  return { encappedPublic, encHex: bytesToHex(encappedPublic), ciphertext };
}

interface OpenedBundle {
  readonly target: ImportTargetRecord;
  /** The decrypted mnemonic or key; the caller zeroes it. */
  readonly plaintext: Uint8Array;
}

/**
 * Finds the caller's open target the bundle was sealed to (the AEAD tag tells) and decrypts. A bundle
 * already imported, sealed to another user's or organization's target, or to an expired or dropped
 * one, is refused naming `encryptedBundle`.
 */
async function openBundle(
  ctx: ActivityContext,
  kind: ImportTargetKind,
  bundle: EncryptedBundle,
): Promise<OpenedBundle> {
  if ((await ctx.store.getImportTargetConsumedBy(ctx.organization.id, bundle.encHex)) !== undefined)
    throw alreadyImported(kind);
  const targets = await ctx.store.listOpenImportTargets(ctx.organization.id, ctx.user.id, ctx.nowMs);
  for (const target of targets) {
    if (target.sealedKey === null) continue;
    const secret = ctx.vault.open(target.sealedKey, target.id);
    let plaintext: Uint8Array | undefined;
    try {
      plaintext = openFromTurnkeySender({
        recipientPrivateKey: secret,
        encappedPublic: bundle.encappedPublic,
        ciphertext: bundle.ciphertext,
      });
    } finally {
      zeroize(secret);
    }
    if (plaintext === undefined) continue;
    if (target.kind !== kind) {
      zeroize(plaintext);
      throw invalid(
        BUNDLE_FIELD,
        `was encrypted to an importBundle from ${INIT_PATH[target.kind]}; this activity takes one from ${INIT_PATH[kind]}`,
      );
    }
    return { target, plaintext };
  }
  throw invalid(
    BUNDLE_FIELD,
    `cannot be decrypted with any open import target of this user in this organization: encrypt to the importBundle that this user's ${INIT_PATH[kind]} returned in this organization (targets last ${IMPORT_TARGET_TTL_MS / 3_600_000} hours and are used once)`,
  );
}

function alreadyImported(kind: ImportTargetKind): CountersignError {
  return invalid(
    BUNDLE_FIELD,
    `was already imported: an import target is used once; call ${INIT_PATH[kind]} again and encrypt to the new importBundle`,
  );
}

/** Consumes the target inside the import's write; a concurrent import of the same bundle loses here. */
async function consumeTarget(
  ctx: ActivityContext,
  tx: StoreTx,
  opened: OpenedBundle,
  bundle: EncryptedBundle,
): Promise<void> {
  if (
    !(await tx.consumeImportTarget(
      ctx.organization.id,
      ctx.user.id,
      opened.target.id,
      bundle.encHex,
      ctx.nowMs,
    ))
  )
    throw alreadyImported(opened.target.kind);
}

// ---- import_wallet ----

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/**
 * The mnemonic in the decrypted bundle, words joined by single spaces. Turnkey's plaintext is the
 * mnemonic with an optional passphrase on a second line (9.5); wallets here hold no passphrase.
 * Messages say "invalid mnemonic" (what @turnkey/core matches) and never echo a word.
 */
function parseMnemonic(plaintext: Uint8Array): string {
  let text: string;
  try {
    text = utf8Strict.decode(plaintext);
  } catch {
    throw invalid(BUNDLE_FIELD, 'invalid mnemonic: the decrypted bundle is not UTF-8 text');
  }
  const newline = text.indexOf('\n');
  if (newline !== -1 && text.slice(newline + 1).replace(/\r?\n$/, '').length > 0)
    throw invalid(
      BUNDLE_FIELD,
      'carries a BIP-39 passphrase after the mnemonic; wallets here have no passphrase, so import the mnemonic alone',
    );
  const words = (newline === -1 ? text : text.slice(0, newline)).split(/\s+/).filter((w) => w.length > 0);
  if (!(MNEMONIC_LENGTHS as readonly number[]).includes(words.length))
    throw invalid(
      BUNDLE_FIELD,
      `invalid mnemonic: it has ${words.length} words; a BIP-39 mnemonic has 12, 15, 18, 21 or 24`,
    );
  const mnemonic = words.join(' ');
  // BIP-39: every word from the English list and the last bits a SHA-256 checksum of the entropy.
  if (!validateMnemonic(mnemonic))
    throw invalid(
      BUNDLE_FIELD,
      'invalid mnemonic: a word is not in the BIP-39 English wordlist or the checksum does not match',
    );
  return mnemonic;
}

const importWallet = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  checkUserId(ctx, p);
  const walletName = reqString(p, 'walletName', PREFIX);
  const specs = parseAccountSpecs(p, PREFIX);
  const bundle = parseEncryptedBundle(p);
  const opened = await openBundle(ctx, 'WALLET', bundle);
  let mnemonic: string;
  try {
    mnemonic = parseMnemonic(opened.plaintext);
  } finally {
    zeroize(opened.plaintext);
  }
  const built = buildWalletFromMnemonic({
    vault: ctx.vault,
    organizationId: ctx.organization.id,
    name: walletName,
    specs,
    mnemonic,
    imported: true,
    nowMs: ctx.nowMs,
    prefix: PREFIX,
  });
  return {
    result: { walletId: built.wallet.id, addresses: built.accounts.map((a) => a.address) },
    write: async (tx) => {
      await consumeTarget(ctx, tx, opened, bundle);
      await insertWallet(tx, built, `${PREFIX}.walletName`);
    },
  };
};

// ---- import_private_key ----

/**
 * The 32-byte key in the decrypted bundle, checked for `curve`. Clients decode hex or Solana base58
 * before encrypting (@turnkey/crypto keeps the first 32 bytes of a Solana keypair); a full 64-byte
 * ed25519 keypair is taken too when its public half matches. The returned copy is the caller's to zero.
 */
function parsePrivateKey(curve: Curve, plaintext: Uint8Array): Uint8Array {
  const len = plaintext.length;
  if (curve === 'CURVE_ED25519' && len === 64) {
    const secret = plaintext.slice(0, 32);
    if (!equalBytes(ed25519.getPublicKey(secret), plaintext.subarray(32))) {
      zeroize(secret);
      throw invalid(
        BUNDLE_FIELD,
        'invalid private key: the 64-byte ed25519 keypair does not end with the public key of its first 32 bytes',
      );
    }
    return secret;
  }
  if (len !== 32)
    throw invalid(
      BUNDLE_FIELD,
      `invalid private key: the decrypted key has ${len} bytes; a ${curve} private key has 32 (clients decode hex or Solana base58 before encrypting)`,
    );
  let valid: boolean;
  switch (curve) {
    case 'CURVE_SECP256K1':
      valid = isValidSecp256k1Key(plaintext);
      break;
    case 'CURVE_P256':
      valid = p256.utils.isValidSecretKey(plaintext);
      break;
    // RFC 8032 section 5.1.5: any 32 bytes are an Ed25519 private key.
    case 'CURVE_ED25519':
      valid = true;
      break;
    default:
      return assertNever(curve);
  }
  if (!valid)
    throw invalid(
      BUNDLE_FIELD,
      `invalid private key: not a ${curve} scalar (it must lie between 1 and the group order minus 1)`,
    );
  return plaintext.slice();
}

const importPrivateKey = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  checkUserId(ctx, p);
  const name = reqString(p, 'privateKeyName', PREFIX);
  const curve = reqEnum(p, 'curve', PREFIX, CURVES);
  const formats = parseAddressFormats(p, curve, PREFIX);
  const bundle = parseEncryptedBundle(p);
  const opened = await openBundle(ctx, 'PRIVATE_KEY', bundle);
  let key: Uint8Array | undefined;
  let record: PrivateKeyRecord;
  try {
    key = parsePrivateKey(curve, opened.plaintext);
    record = buildPrivateKey({
      vault: ctx.vault,
      organizationId: ctx.organization.id,
      name,
      curve,
      privateKey: key,
      formats,
      tags: [],
      imported: true,
      nowMs: ctx.nowMs,
      field: PREFIX,
    });
  } finally {
    zeroize(key, opened.plaintext);
  }
  const r = record;
  return {
    result: {
      privateKeyId: r.id,
      addresses: r.addresses.map((a) => ({ format: a.format, address: a.address })),
    },
    write: async (tx) => {
      await consumeTarget(ctx, tx, opened, bundle);
      if (await tx.privateKeyNameTaken(r.organizationId, r.name)) {
        const field = `${PREFIX}.privateKeyName`;
        throw new CountersignError(
          'NAME_NOT_UNIQUE',
          `${field}: a private key with this name already exists`,
          {
            field,
          },
        );
      }
      await tx.insertPrivateKey(r);
    },
  };
};

export const IMPORT_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_INIT_IMPORT_WALLET',
    path: 'init_import_wallet',
    intentKey: 'initImportWalletIntent',
    resultKey: 'initImportWalletResult',
    run: initImport('WALLET'),
  },
  {
    type: 'ACTIVITY_TYPE_IMPORT_WALLET',
    path: 'import_wallet',
    intentKey: 'importWalletIntent',
    resultKey: 'importWalletResult',
    run: importWallet,
  },
  {
    type: 'ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY',
    path: 'init_import_private_key',
    intentKey: 'initImportPrivateKeyIntent',
    resultKey: 'initImportPrivateKeyResult',
    run: initImport('PRIVATE_KEY'),
  },
  {
    type: 'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
    path: 'import_private_key',
    intentKey: 'importPrivateKeyIntent',
    resultKey: 'importPrivateKeyResult',
    run: importPrivateKey,
  },
];
