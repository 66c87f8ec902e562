/** BIP-341/BIP-86 key-path tweak with an empty script tree: Q = P + int(hash_TapTweak(x(P)))·G. */
import { CountersignError } from '../../shared/errors.js';
import { taprootOutputKeyOf, taprootTweakSeckey } from '../../shared/secp256k1.js';

/**
 * The 32-byte x-only output key of a BIP-86 single-key P2TR output, from a 33- or 65-byte SEC1 secp256k1
 * public key (or its 32-byte x coordinate). The internal key is lift_x(x(P)), the even-Y point.
 */
export function taprootOutputKey(publicKey: Uint8Array): Uint8Array {
  const x = publicKey.length === 32 ? publicKey : publicKey.subarray(1, 33);
  const q = taprootOutputKeyOf(x);
  if (q === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the key has no BIP-86 taproot output key');
  return q;
}

/**
 * BIP-341 taproot_tweak_seckey: negate d when d·G has odd Y, then add the tweak of x(d·G). The BIP-340
 * signature under the result verifies against {@link taprootOutputKey} of d·G. The caller zeroes the result.
 */
export function taprootTweakPrivateKey(privateKey: Uint8Array): Uint8Array {
  const tweaked = taprootTweakSeckey(privateKey);
  if (tweaked === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'taproot-tweaked key is zero or out of range');
  return tweaked;
}
