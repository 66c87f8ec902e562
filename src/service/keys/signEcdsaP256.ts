import { p256 } from '@noble/curves/nist.js';
import { CountersignError } from '../../shared/errors.js';
import { assertDigest32, assertPrivateKey } from './keyMaterial.js';
import type { SignatureOut } from './signature.js';

/**
 * RFC 6979 ECDSA on P-256 over a 32-byte digest (no further hashing). s is normalized to the low half
 * like secp256k1 signatures, and v is the recovery id of the normalized signature.
 */
export function signEcdsaP256(privateKey: Uint8Array, digest32: Uint8Array): SignatureOut {
  assertPrivateKey('CURVE_P256', privateKey);
  assertDigest32(digest32);
  // 'recovered' is recovery ‖ r ‖ s; noble flips the recovery bit when lowS negates s.
  const sig = p256.sign(digest32, privateKey, { prehash: false, lowS: true, format: 'recovered' });
  const v = sig[0];
  // 2 and 3 (R.x ≥ n) occur with probability about 2^-128 and have no Turnkey encoding.
  if (sig.length !== 65 || (v !== 0 && v !== 1)) {
    throw new CountersignError('INTERNAL', 'P-256 signature has no 0/1 recovery id');
  }
  return { r: sig.slice(1, 33), s: sig.slice(33, 65), v };
}
