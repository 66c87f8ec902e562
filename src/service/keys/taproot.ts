/** BIP-341/BIP-86 key-path tweak with an empty script tree: Q = P + int(hash_TapTweak(x(P)))·G. */
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { bigintToFixed, bytesToBigint, concatBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';

const { Point } = secp256k1;
const N = Point.Fn.ORDER;

function tapTweak(xOnly: Uint8Array): bigint {
  const t = bytesToBigint(schnorr.utils.taggedHash('TapTweak', xOnly));
  // BIP-341 taproot_tweak_pubkey: "if t >= SECP256K1_ORDER: raise ValueError".
  if (t >= N) throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'taproot tweak is out of range');
  return t;
}

/**
 * The 32-byte x-only output key of a BIP-86 single-key P2TR output, from a 33- or 65-byte SEC1 secp256k1
 * public key (or its 32-byte x coordinate). The internal key is lift_x(x(P)), the even-Y point.
 */
export function taprootOutputKey(publicKey: Uint8Array): Uint8Array {
  const x = publicKey.length === 32 ? publicKey : publicKey.subarray(1, 33);
  const P = Point.fromBytes(concatBytes(Uint8Array.of(2), x));
  const Q = P.add(Point.BASE.multiply(tapTweak(x)));
  if (Q.is0())
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'taproot output key is the point at infinity');
  return Q.toBytes(true).subarray(1);
}

/**
 * BIP-341 taproot_tweak_seckey: negate d when d·G has odd Y, then add the tweak of x(d·G). The BIP-340
 * signature under the result verifies against {@link taprootOutputKey} of d·G. The caller zeroes the result.
 */
export function taprootTweakPrivateKey(privateKey: Uint8Array): Uint8Array {
  let d = bytesToBigint(privateKey);
  const P = Point.BASE.multiply(d);
  const compressed = P.toBytes(true);
  if (compressed[0] === 3) d = N - d;
  const tweaked = (d + tapTweak(compressed.subarray(1))) % N;
  zeroize(compressed);
  if (tweaked === 0n) throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'taproot-tweaked key is zero');
  return bigintToFixed(tweaked, 32);
}
