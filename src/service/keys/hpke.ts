/**
 * HPKE base mode (RFC 9180) with DHKEM(P-256, HKDF-SHA256) and HKDF-SHA256. The sender side seals
 * export bundles to a caller's P-256 key; the recipient side opens import bundles a client sealed to
 * a target key the service handed out (init_import_*). `sealToTurnkeyTarget` / `openFromTurnkeySender`
 * add what Turnkey's bundles fix on top of the RFC (turnkey-api.md 9.5): AES-256-GCM, info
 * "turnkey_hpke", and the non-standard AAD enc ‖ pkR.
 */
import { createCipheriv, createDecipheriv, type CipherGCMTypes } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { expand, extract } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, utf8, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';

/** RFC 9180 section 7.3 AEAD identifiers with their key length Nk; Nn is 12 and Nt 16 for both. */
export const HPKE_AEADS = {
  'AES-128-GCM': { id: 0x0001, nk: 16 },
  'AES-256-GCM': { id: 0x0002, nk: 32 },
} as const;
export type HpkeAead = keyof typeof HPKE_AEADS;

const KEM_ID = 0x0010; // DHKEM(P-256, HKDF-SHA256)
const KDF_ID = 0x0001; // HKDF-SHA256
const NN = 12;
const NT = 16;
const UNCOMPRESSED_LEN = 65;
const VERSION_LABEL = utf8('HPKE-v1');

function i2osp(n: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  for (let i = len - 1, v = n; i >= 0; i--, v = Math.floor(v / 256)) out[i] = v & 0xff;
  return out;
}

const KEM_SUITE_ID = concatBytes(utf8('KEM'), i2osp(KEM_ID, 2));

function hpkeSuiteId(aead: HpkeAead): Uint8Array {
  return concatBytes(utf8('HPKE'), i2osp(KEM_ID, 2), i2osp(KDF_ID, 2), i2osp(HPKE_AEADS[aead].id, 2));
}

// RFC 9180 section 4: LabeledExtract / LabeledExpand.
function labeledExtract(suiteId: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array): Uint8Array {
  return extract(sha256, concatBytes(VERSION_LABEL, suiteId, utf8(label), ikm), salt);
}

function labeledExpand(
  suiteId: Uint8Array,
  prk: Uint8Array,
  label: string,
  info: Uint8Array,
  length: number,
): Uint8Array {
  return expand(
    sha256,
    prk,
    concatBytes(i2osp(length, 2), VERSION_LABEL, suiteId, utf8(label), info),
    length,
  );
}

/** Throws FIELD_INVALID (naming `field`) unless `key` is an uncompressed SEC1 point on P-256. */
export function assertP256UncompressedPublicKey(key: Uint8Array, field: string): void {
  if (key.length !== UNCOMPRESSED_LEN || key[0] !== 0x04)
    throw invalid(field, 'must be an uncompressed P-256 public key (65 bytes, starting with 04)');
  if (!p256.utils.isValidPublicKey(key, false)) throw invalid(field, 'is not a point on the P-256 curve');
}

/** An RFC 9180 sender context (section 5.2); `seal` advances the sequence number. */
export interface HpkeSenderContext {
  /** The encapsulated ephemeral public key (SerializePublicKey: uncompressed SEC1). */
  readonly enc: Uint8Array;
  readonly sharedSecret: Uint8Array;
  readonly key: Uint8Array;
  readonly baseNonce: Uint8Array;
  readonly exporterSecret: Uint8Array;
  /** AEAD seal under the next nonce; the ciphertext carries the 16-byte tag at its end. */
  seal(aad: Uint8Array, plaintext: Uint8Array): Uint8Array;
  /** Zeroes every secret the context holds. */
  destroy(): void;
}

export interface SetupBaseSenderInput {
  readonly recipientPublicKey: Uint8Array;
  readonly info: Uint8Array;
  readonly aead: HpkeAead;
  /** The ephemeral secret skE. Fixed only by known-answer tests; callers use `hpkeSeal`. */
  readonly ephemeralPrivateKey: Uint8Array;
}

/** DHKEM shared secret (RFC 9180 section 4.1): ExtractAndExpand(dh, enc ‖ pkR); zeroes `point`. */
function kemSharedSecret(point: Uint8Array, enc: Uint8Array, pkR: Uint8Array): Uint8Array {
  // DH is the x-coordinate of the shared point (section 7.1.1's Ndh = 32 bytes).
  const dh = point.slice(1);
  const eaePrk = labeledExtract(KEM_SUITE_ID, new Uint8Array(0), 'eae_prk', dh);
  const sharedSecret = labeledExpand(KEM_SUITE_ID, eaePrk, 'shared_secret', concatBytes(enc, pkR), 32);
  zeroize(point, dh, eaePrk);
  return sharedSecret;
}

interface KeySchedule {
  readonly key: Uint8Array;
  readonly baseNonce: Uint8Array;
  readonly exporterSecret: Uint8Array;
}

/** KeySchedule, mode_base: psk and psk_id are empty (RFC 9180 section 5.1). */
function keySchedule(sharedSecret: Uint8Array, info: Uint8Array, aead: HpkeAead): KeySchedule {
  const suite = hpkeSuiteId(aead);
  const empty = new Uint8Array(0);
  const pskIdHash = labeledExtract(suite, empty, 'psk_id_hash', empty);
  const infoHash = labeledExtract(suite, empty, 'info_hash', info);
  const context = concatBytes(Uint8Array.of(0x00), pskIdHash, infoHash);
  const secret = labeledExtract(suite, sharedSecret, 'secret', empty);
  const key = labeledExpand(suite, secret, 'key', context, HPKE_AEADS[aead].nk);
  const baseNonce = labeledExpand(suite, secret, 'base_nonce', context, NN);
  const exporterSecret = labeledExpand(suite, secret, 'exp', context, 32);
  zeroize(secret);
  return { key, baseNonce, exporterSecret };
}

/** ComputeNonce (RFC 9180 section 5.2): base_nonce XOR I2OSP(seq, Nn). */
function computeNonce(baseNonce: Uint8Array, seq: number): Uint8Array {
  const nonce = baseNonce.slice();
  const seqBytes = i2osp(seq, NN);
  for (let i = 0; i < NN; i++) nonce[i] = (nonce[i] as number) ^ (seqBytes[i] as number);
  return nonce;
}

function gcmAlgorithm(aead: HpkeAead): CipherGCMTypes {
  return aead === 'AES-256-GCM' ? 'aes-256-gcm' : 'aes-128-gcm';
}

/** SetupBaseS (RFC 9180 section 5.1.1) with DHKEM(P-256) Encap given skE (section 4.1). */
export function setupBaseSender(input: SetupBaseSenderInput): HpkeSenderContext {
  const { recipientPublicKey: pkR, info, aead, ephemeralPrivateKey: skE } = input;
  assertP256UncompressedPublicKey(pkR, 'recipientPublicKey');
  if (!p256.utils.isValidSecretKey(skE))
    throw new CountersignError('INTERNAL', 'HPKE ephemeral key is not a valid P-256 scalar');
  const enc = p256.getPublicKey(skE, false);
  const sharedSecret = kemSharedSecret(p256.getSharedSecret(skE, pkR, true), enc, pkR);
  const { key, baseNonce, exporterSecret } = keySchedule(sharedSecret, info, aead);

  let seq = 0;
  return {
    enc,
    sharedSecret,
    key,
    baseNonce,
    exporterSecret,
    seal(aad, plaintext) {
      const nonce = computeNonce(baseNonce, seq);
      seq += 1;
      const cipher = createCipheriv(gcmAlgorithm(aead), key, nonce, { authTagLength: NT });
      cipher.setAAD(aad);
      const head = cipher.update(plaintext);
      const tail = cipher.final();
      return concatBytes(head, tail, cipher.getAuthTag());
    },
    destroy() {
      zeroize(sharedSecret, key, baseNonce, exporterSecret);
    },
  };
}

export interface HpkeSealInput {
  readonly recipientPublicKey: Uint8Array;
  readonly plaintext: Uint8Array;
  readonly info: Uint8Array;
  readonly aad: Uint8Array;
  readonly aead: HpkeAead;
}

export interface HpkeSealed {
  /** Uncompressed SEC1 ephemeral public key. */
  readonly encappedPublic: Uint8Array;
  /** AEAD ciphertext with the tag appended. */
  readonly ciphertext: Uint8Array;
}

/** Single-shot HPKE base-mode seal (RFC 9180 section 6.1) under a fresh ephemeral key. */
export function hpkeSeal(input: HpkeSealInput): HpkeSealed {
  const skE = p256.utils.randomSecretKey();
  const ctx = setupBaseSender({
    recipientPublicKey: input.recipientPublicKey,
    info: input.info,
    aead: input.aead,
    ephemeralPrivateKey: skE,
  });
  try {
    return { encappedPublic: ctx.enc, ciphertext: ctx.seal(input.aad, input.plaintext) };
  } finally {
    ctx.destroy();
    zeroize(skE);
  }
}

/** The `info` Turnkey's enclaves and @turnkey/crypto use for every bundle. */
export const TURNKEY_HPKE_INFO = utf8('turnkey_hpke');

/**
 * Seals `plaintext` to a Turnkey-style target key: AES-256-GCM, info "turnkey_hpke", and AAD
 * enc ‖ pkR (both uncompressed) — what @turnkey/crypto's hpkeDecrypt expects.
 */
export function sealToTurnkeyTarget(input: {
  readonly targetPublicKey: Uint8Array;
  readonly plaintext: Uint8Array;
}): HpkeSealed {
  const { targetPublicKey: pkR, plaintext } = input;
  const skE = p256.utils.randomSecretKey();
  const ctx = setupBaseSender({
    recipientPublicKey: pkR,
    info: TURNKEY_HPKE_INFO,
    aead: 'AES-256-GCM',
    ephemeralPrivateKey: skE,
  });
  try {
    return { encappedPublic: ctx.enc, ciphertext: ctx.seal(concatBytes(ctx.enc, pkR), plaintext) };
  } finally {
    ctx.destroy();
    zeroize(skE);
  }
}

/** An RFC 9180 recipient context (section 5.2); `open` advances the sequence number on success. */
export interface HpkeRecipientContext {
  readonly sharedSecret: Uint8Array;
  readonly key: Uint8Array;
  readonly baseNonce: Uint8Array;
  readonly exporterSecret: Uint8Array;
  /** AEAD open under the next nonce; undefined when the tag does not verify (wrong key, tampered). */
  open(aad: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined;
  /** Zeroes every secret the context holds. */
  destroy(): void;
}

export interface SetupBaseRecipientInput {
  /** The sender's encapsulated public key (uncompressed SEC1); check it at the edge with its field name. */
  readonly enc: Uint8Array;
  readonly recipientPrivateKey: Uint8Array;
  readonly info: Uint8Array;
  readonly aead: HpkeAead;
}

/** SetupBaseR (RFC 9180 section 5.1.1) with DHKEM(P-256) Decap (section 4.1). */
export function setupBaseRecipient(input: SetupBaseRecipientInput): HpkeRecipientContext {
  const { enc, recipientPrivateKey: skR, info, aead } = input;
  assertP256UncompressedPublicKey(enc, 'enc');
  if (!p256.utils.isValidSecretKey(skR))
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'HPKE recipient key is not a valid P-256 scalar');
  const pkR = p256.getPublicKey(skR, false);
  const sharedSecret = kemSharedSecret(p256.getSharedSecret(skR, enc, true), enc, pkR);
  const { key, baseNonce, exporterSecret } = keySchedule(sharedSecret, info, aead);

  let seq = 0;
  return {
    sharedSecret,
    key,
    baseNonce,
    exporterSecret,
    open(aad, ciphertext) {
      if (ciphertext.length < NT) return undefined;
      const nonce = computeNonce(baseNonce, seq);
      const decipher = createDecipheriv(gcmAlgorithm(aead), key, nonce, { authTagLength: NT });
      decipher.setAAD(aad);
      decipher.setAuthTag(ciphertext.subarray(ciphertext.length - NT));
      const head = decipher.update(ciphertext.subarray(0, ciphertext.length - NT));
      let tail: Buffer;
      try {
        tail = decipher.final();
      } catch {
        // GCM authentication failed: the released bytes are unauthenticated, so wipe them.
        zeroize(head);
        return undefined;
      }
      seq += 1;
      const out = concatBytes(head, tail);
      zeroize(head, tail);
      return out;
    },
    destroy() {
      zeroize(sharedSecret, key, baseNonce, exporterSecret);
    },
  };
}

/**
 * Opens what a Turnkey client sealed to our target key (@turnkey/crypto's hpkeEncrypt): AES-256-GCM,
 * info "turnkey_hpke", AAD enc ‖ pkR. Undefined when the bundle was not sealed to this key or was
 * altered; the caller zeroes the plaintext it gets.
 */
export function openFromTurnkeySender(input: {
  readonly recipientPrivateKey: Uint8Array;
  readonly encappedPublic: Uint8Array;
  readonly ciphertext: Uint8Array;
}): Uint8Array | undefined {
  const ctx = setupBaseRecipient({
    enc: input.encappedPublic,
    recipientPrivateKey: input.recipientPrivateKey,
    info: TURNKEY_HPKE_INFO,
    aead: 'AES-256-GCM',
  });
  try {
    const pkR = p256.getPublicKey(input.recipientPrivateKey, false);
    return ctx.open(concatBytes(input.encappedPublic, pkR), input.ciphertext);
  } finally {
    ctx.destroy();
  }
}
