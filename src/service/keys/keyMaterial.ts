/** Entry checks for key material and digests handed to the signing primitives (noble's `abytes` habit). */
import { p256 } from '@noble/curves/nist.js';
import { CountersignError } from '../../shared/errors.js';
import { isValidPrivateKey as isValidSecp256k1Key } from '../../shared/secp256k1.js';
import { assertNever, type Curve } from './curves.js';

/**
 * Throws KEY_MATERIAL_UNAVAILABLE unless `key` is a usable private key on `curve`. Keys come from the
 * vault, not from callers, so a bad one means the stored material is unusable, not that a request is wrong.
 */
export function assertPrivateKey(curve: Curve, key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== 32) {
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'private key must be 32 bytes');
  }
  let ok: boolean;
  switch (curve) {
    case 'CURVE_SECP256K1':
      ok = isValidSecp256k1Key(key);
      break;
    case 'CURVE_P256':
      ok = p256.utils.isValidSecretKey(key);
      break;
    // RFC 8032: any 32 bytes are an Ed25519 secret (the scalar is derived by hashing them).
    case 'CURVE_ED25519':
      ok = true;
      break;
    default:
      return assertNever(curve);
  }
  if (!ok)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'private key is not a valid scalar for the curve');
}

/** Throws PAYLOAD_INVALID unless `digest` is exactly 32 bytes (what ECDSA and BIP-340 sign here). */
export function assertDigest32(digest: Uint8Array): void {
  if (!(digest instanceof Uint8Array) || digest.length !== 32) {
    throw new CountersignError('PAYLOAD_INVALID', 'digest must be exactly 32 bytes');
  }
}
