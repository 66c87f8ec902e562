import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH } from './types.js';

// RFC 8410: SubjectPublicKeyInfo DER for an Ed25519 key is this prefix followed by the raw 32 bytes.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * RFC 8032 Ed25519 verification (PureEdDSA, no pre-hash) by OpenSSL through node:crypto, which
 * also rejects a non-canonical S (≥ L). False for wrong lengths or a key that is not a point.
 */
// Building a KeyObject costs more than the verification; signers repeat, so keys are cached.
const keys = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 10_000;

function keyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey).toString('hex');
  let key = keys.get(id);
  if (key === undefined) {
    key = createPublicKey({
      key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]),
      format: 'der',
      type: 'spki',
    });
    if (keys.size >= MAX_CACHED_KEYS) keys.clear();
    keys.set(id, key);
  }
  return key;
}

export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_LENGTH || publicKey.length !== PUBLIC_KEY_LENGTH) return false;
  try {
    return verify(null, message, keyObject(publicKey), signature);
  } catch {
    return false;
  }
}
