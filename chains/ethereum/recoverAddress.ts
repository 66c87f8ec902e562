import { keccak_256 } from '@noble/hashes/sha3.js';
import { recoverPublicKey } from '../../src/shared/secp256k1.js';
import { toChecksumAddress } from './toChecksumAddress.js';

/**
 * Recovers the EIP-55 signer address of a 32-byte digest with the native libsecp256k1; undefined
 * when the signature is invalid or high-S (EIP-2). r and s are big-endian, at most 32 bytes.
 */
export function recoverAddress(
  digest: Uint8Array,
  r: Uint8Array,
  s: Uint8Array,
  yParity: number,
): string | undefined {
  if (r.length > 32 || s.length > 32) return undefined;
  const compact = new Uint8Array(64);
  compact.set(r, 32 - r.length);
  compact.set(s, 64 - s.length);
  const pub = recoverPublicKey(digest, compact, yParity, false);
  if (pub === undefined || pub.length !== 65) return undefined;
  return toChecksumAddress(keccak_256(pub.subarray(1)).subarray(12));
}
