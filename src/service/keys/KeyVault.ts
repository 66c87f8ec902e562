/**
 * Envelope encryption of key material at rest (DESIGN.md "State"): a random 256-bit data key (DEK)
 * per record encrypts the plaintext, and the master key wraps the DEK, both with AES-256-GCM.
 */
import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  randomFillSync,
  type KeyObject,
} from 'node:crypto';
import { concatBytes, utf8, zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';

const VERSION = 1;
const KEY_LEN = 32;
// NIST SP 800-38D: 96-bit IVs; random IVs are safe far beyond the number of records a vault holds.
const IV_LEN = 12;
const TAG_LEN = 16;
const WRAPPED_DEK_LEN = IV_LEN + KEY_LEN + TAG_LEN;
const HEADER_LEN = 1 + WRAPPED_DEK_LEN + IV_LEN;

/**
 * Additional data binds both ciphertexts to the blob version, their role and the record id, so a
 * blob (or its wrapped DEK) moved to another row, or a DEK used as data, fails authentication.
 */
function aad(role: 'dek' | 'data', recordId: string): Uint8Array {
  return concatBytes(utf8(`countersign/keyvault/v${VERSION}/${role}`), Uint8Array.of(0), utf8(recordId));
}

function encrypt(key: KeyObject | Uint8Array, plaintext: Uint8Array, ad: Uint8Array): Uint8Array {
  const iv = randomFillSync(new Uint8Array(IV_LEN));
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_LEN });
  cipher.setAAD(ad);
  const head = cipher.update(plaintext);
  const tail = cipher.final();
  return concatBytes(iv, head, tail, cipher.getAuthTag());
}

/** Throws on any authentication failure; the message never says which part was wrong. */
function decrypt(key: KeyObject | Uint8Array, box: Uint8Array, ad: Uint8Array): Uint8Array {
  const iv = box.subarray(0, IV_LEN);
  const ct = box.subarray(IV_LEN, box.length - TAG_LEN);
  const tag = box.subarray(box.length - TAG_LEN);
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_LEN });
  decipher.setAAD(ad);
  decipher.setAuthTag(tag);
  const head = decipher.update(ct);
  let tail: Buffer;
  try {
    tail = decipher.final();
  } catch (e) {
    head.fill(0);
    throw e;
  }
  const out = concatBytes(head, tail);
  head.fill(0);
  tail.fill(0);
  return out;
}

function unavailable(cause?: unknown): CountersignError {
  return new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'stored key material could not be decrypted', {
    cause,
  });
}

/** Seals and opens key material under one master key. */
export class KeyVault {
  readonly #master: KeyObject;

  /** Copies `masterKey` (32 bytes) into a native key object; the caller keeps and zeroes its buffer. */
  constructor(masterKey: Uint8Array) {
    if (!(masterKey instanceof Uint8Array) || masterKey.length !== KEY_LEN) {
      throw new CountersignError('CONFIG_INVALID', 'master key must be 32 bytes');
    }
    this.#master = createSecretKey(masterKey);
  }

  /** version ‖ wrapped DEK (iv ‖ ct ‖ tag) ‖ iv ‖ ct ‖ tag. */
  seal(plaintext: Uint8Array, recordId: string): Uint8Array {
    const dek = randomFillSync(new Uint8Array(KEY_LEN));
    try {
      const wrapped = encrypt(this.#master, dek, aad('dek', recordId));
      const body = encrypt(dek, plaintext, aad('data', recordId));
      return concatBytes(Uint8Array.of(VERSION), wrapped, body);
    } finally {
      zeroize(dek);
    }
  }

  /** The plaintext of a sealed blob; KEY_MATERIAL_UNAVAILABLE on any mismatch. The caller zeroes it. */
  open(sealed: Uint8Array, recordId: string): Uint8Array {
    if (!(sealed instanceof Uint8Array) || sealed.length < HEADER_LEN + TAG_LEN || sealed[0] !== VERSION) {
      throw unavailable();
    }
    let dek: Uint8Array | undefined;
    try {
      dek = decrypt(this.#master, sealed.subarray(1, 1 + WRAPPED_DEK_LEN), aad('dek', recordId));
      if (dek.length !== KEY_LEN) throw unavailable();
      return decrypt(dek, sealed.subarray(1 + WRAPPED_DEK_LEN), aad('data', recordId));
    } catch (e) {
      if (e instanceof CountersignError) throw e;
      throw unavailable(e);
    } finally {
      zeroize(dek);
    }
  }
}
