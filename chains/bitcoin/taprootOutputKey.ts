import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToBigint } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';

const { Point } = secp256k1;

/**
 * Output keys already computed, by x-only key (hex). The tweak is a point multiplication in
 * JavaScript, and one signature asks for the same key's output key several times (the plan, the
 * signer's addresses, verification) and every request of a signer again. Bounded: emptied when full.
 */
const OUTPUT_KEYS = new Map<string, Uint8Array>();
const MAX_OUTPUT_KEYS = 4096;

/**
 * The BIP-86 output key: Q = lift_x(x(P)) + int(hash_TapTweak(x(P)))·G with an empty script tree
 * (BIP-341 taproot_tweak_pubkey), as 32 x-only bytes. `publicKey` is 33-byte SEC1 or 32-byte x-only.
 */
export function taprootOutputKey(publicKey: Uint8Array, field = 'signer.publicKey'): Uint8Array {
  const x = publicKey.length === 32 ? publicKey : publicKey.subarray(1, 33);
  if (publicKey.length !== 32 && publicKey.length !== 33)
    throw invalid(field, 'must be a 33-byte compressed key');
  const id = Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('hex');
  const known = OUTPUT_KEYS.get(id);
  // A copy: the caller owns what it gets.
  if (known !== undefined) return known.slice();
  const q = tweak(x, field);
  if (OUTPUT_KEYS.size >= MAX_OUTPUT_KEYS) OUTPUT_KEYS.clear();
  OUTPUT_KEYS.set(id, q.slice());
  return q;
}

function tweak(x: Uint8Array, field: string): Uint8Array {
  let P;
  try {
    P = Point.fromBytes(Uint8Array.of(0x02, ...x));
  } catch {
    throw invalid(field, 'x coordinate is not on secp256k1');
  }
  const t = bytesToBigint(schnorr.utils.taggedHash('TapTweak', x));
  if (t >= Point.Fn.ORDER) throw invalid(field, 'taproot tweak is not below the curve order');
  const Q = P.add(Point.BASE.multiply(t));
  if (Q.is0()) throw invalid(field, 'taproot output key is the point at infinity');
  return Q.toBytes(true).slice(1);
}
