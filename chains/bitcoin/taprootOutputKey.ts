import { invalid } from '../../src/shared/errors.js';
import { taprootOutputKeyOf } from '../../src/shared/secp256k1.js';

/**
 * The BIP-86 output key: Q = lift_x(x(P)) + int(hash_TapTweak(x(P)))·G with an empty script tree
 * (BIP-341 taproot_tweak_pubkey), as 32 x-only bytes. `publicKey` is 33-byte SEC1 or 32-byte x-only.
 */
export function taprootOutputKey(publicKey: Uint8Array, field = 'signer.publicKey'): Uint8Array {
  if (publicKey.length !== 32 && publicKey.length !== 33)
    throw invalid(field, 'must be a 33-byte compressed key');
  const x = publicKey.length === 32 ? publicKey : publicKey.subarray(1, 33);
  const q = taprootOutputKeyOf(x);
  if (q === undefined)
    throw invalid(field, 'has no BIP-86 output key (x not on secp256k1, or the tweak is out of range)');
  return q;
}
