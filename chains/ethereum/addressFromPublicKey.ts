import { keccak_256 } from '../../src/shared/keccak.js';
import { invalid } from '../../src/shared/errors.js';
import { convertPublicKey, isValidPublicKey } from '../../src/shared/secp256k1.js';
import { toChecksumAddress } from './toChecksumAddress.js';

/** EIP-55 address of a 33- or 65-byte secp256k1 public key: last 20 bytes of keccak256(x ‖ y). */
export function addressFromPublicKey(pub: Uint8Array): string {
  if (!isValidPublicKey(pub))
    throw invalid('public_key', 'is not a valid 33- or 65-byte secp256k1 public key');
  const full = pub.length === 65 ? pub : convertPublicKey(pub, false);
  return toChecksumAddress(keccak_256(full.subarray(1)).subarray(12));
}
