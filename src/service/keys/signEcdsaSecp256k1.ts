import { CountersignError } from '../../shared/errors.js';
import { signDigest } from '../../shared/secp256k1.js';
import { assertDigest32, assertPrivateKey } from './keyMaterial.js';
import type { SignatureOut } from './signature.js';

/** RFC 6979 ECDSA over a 32-byte digest through native libsecp256k1: low-S, v = recovery id. */
export function signEcdsaSecp256k1(privateKey: Uint8Array, digest32: Uint8Array): SignatureOut {
  assertPrivateKey('CURVE_SECP256K1', privateKey);
  assertDigest32(digest32);
  const { compact, recovery } = signDigest(digest32, privateKey);
  if (compact.length !== 64 || (recovery !== 0 && recovery !== 1)) {
    throw new CountersignError('INTERNAL', 'libsecp256k1 returned a malformed signature');
  }
  return { r: compact.slice(0, 32), s: compact.slice(32, 64), v: recovery };
}
