import { createPublicKey, verify } from 'node:crypto';
import { PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH } from './types.js';

// RFC 8410: SubjectPublicKeyInfo DER for an Ed25519 key is this prefix followed by the raw 32 bytes.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * RFC 8032 Ed25519 verification (PureEdDSA, no pre-hash) by OpenSSL through node:crypto, which
 * also rejects a non-canonical S (≥ L). False for wrong lengths or a key that is not a point.
 */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_LENGTH || publicKey.length !== PUBLIC_KEY_LENGTH) return false;
  try {
    const key = createPublicKey({
      key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]),
      format: 'der',
      type: 'spki',
    });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
