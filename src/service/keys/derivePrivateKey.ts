/**
 * Hierarchical derivation of a child private key from a BIP-39 seed: BIP-32 for secp256k1, SLIP-10
 * for NIST P-256 ("Nist256p1 seed") and ed25519 ("ed25519 seed", hardened segments only).
 */
import { p256 } from '@noble/curves/nist.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { bigintToFixed, bytesToBigint, concatBytes, utf8, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { publicKeyOf as secp256k1PublicKeyOf, SECP256K1_N } from '../../shared/secp256k1.js';
import { assertNever, type Curve } from './curves.js';
import { isHardened, parseDerivationPath } from './parseDerivationPath.js';

const P256_N = p256.Point.Fn.ORDER;

/** SLIP-10 "Curve" HMAC keys; "Bitcoin seed" is BIP-32's own. */
const MASTER_HMAC_KEY: Record<Curve, Uint8Array> = {
  CURVE_SECP256K1: utf8('Bitcoin seed'),
  CURVE_P256: utf8('Nist256p1 seed'),
  CURVE_ED25519: utf8('ed25519 seed'),
};

/** Group order for the Weierstrass curves; ed25519 keys are not scalars (SLIP-10 uses I_L as is). */
function orderOf(curve: Curve): bigint | undefined {
  switch (curve) {
    case 'CURVE_SECP256K1':
      return SECP256K1_N;
    case 'CURVE_P256':
      return P256_N;
    case 'CURVE_ED25519':
      return undefined;
    default:
      return assertNever(curve);
  }
}

/** ser_P(point(k)): the 33-byte compressed public key (BIP-32 non-hardened children). */
function compressedPoint(curve: Curve, k: Uint8Array): Uint8Array {
  switch (curve) {
    case 'CURVE_SECP256K1':
      return secp256k1PublicKeyOf(k, true);
    case 'CURVE_P256':
      return p256.getPublicKey(k, true);
    case 'CURVE_ED25519':
      throw new Error('unreachable: ed25519 has no non-hardened derivation');
    default:
      return assertNever(curve);
  }
}

function ser32(i: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, i, false);
  return b;
}

/**
 * Derives the private key at `path` from `seed` (16 to 64 bytes, normally a BIP-39 seed). The result
 * belongs to the caller, who zeroes it. Errors about the path name `field`.
 */
export function derivePrivateKey(seed: Uint8Array, curve: Curve, path: string, field: string): Uint8Array {
  const indexes = parseDerivationPath(path, field);
  // BIP-32: "Generate a seed byte sequence S of a chosen length (between 128 and 512 bits)".
  if (!(seed instanceof Uint8Array) || seed.length < 16 || seed.length > 64) {
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'seed must be 16 to 64 bytes');
  }
  if (curve === 'CURVE_ED25519') {
    const at = indexes.findIndex((i) => !isHardened(i));
    if (at >= 0) {
      throw invalid(
        field,
        `ed25519 keys derive by SLIP-10 with hardened segments only; segment ${at + 1} is not hardened`,
      );
    }
  }
  const n = orderOf(curve);

  let I: Uint8Array = hmac(sha512, MASTER_HMAC_KEY[curve], seed);
  let k: Uint8Array = I.slice(0, 32);
  let c: Uint8Array = I.slice(32, 64);
  if (n !== undefined) {
    // SLIP-10 retries with S := I while I_L is 0 or ≥ n (about 2^-32 for P-256, whose n is well below
    // 2^256); BIP-32 declares the secp256k1 master key invalid instead (about 2^-127).
    for (let kn = bytesToBigint(k); kn === 0n || kn >= n; kn = bytesToBigint(k)) {
      if (curve === 'CURVE_SECP256K1') {
        zeroize(I, k, c);
        throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'seed yields an invalid BIP-32 master key');
      }
      const next = hmac(sha512, MASTER_HMAC_KEY[curve], I);
      zeroize(I, k, c);
      I = next;
      k = I.slice(0, 32);
      c = I.slice(32, 64);
    }
  }
  zeroize(I);

  try {
    for (let depth = 0; depth < indexes.length; depth++) {
      const index = indexes[depth] as number;
      const data = isHardened(index)
        ? concatBytes(new Uint8Array(1), k, ser32(index))
        : concatBytes(compressedPoint(curve, k), ser32(index));
      let J: Uint8Array = hmac(sha512, c, data);
      zeroize(data);
      for (;;) {
        const IL = J.subarray(0, 32);
        const IR = J.subarray(32, 64);
        if (n === undefined) {
          // SLIP-10 ed25519: the child key is I_L itself.
          zeroize(k, c);
          k = IL.slice();
          c = IR.slice();
          break;
        }
        const t = bytesToBigint(IL);
        const child = t < n ? (t + bytesToBigint(k)) % n : 0n;
        if (child !== 0n) {
          zeroize(k, c);
          k = bigintToFixed(child, 32);
          c = IR.slice();
          break;
        }
        if (curve === 'CURVE_SECP256K1') {
          zeroize(J);
          // BIP-32: "the resulting key is invalid, and one should proceed with the next value for i".
          throw invalid(field, `segment ${depth + 1} derives an invalid BIP-32 key; use the next index`);
        }
        // SLIP-10: I = HMAC-SHA512(Key = c_par, Data = 0x01 ‖ I_R ‖ ser32(i)), then retry.
        const retry = concatBytes(Uint8Array.of(1), IR, ser32(index));
        const next = hmac(sha512, c, retry);
        zeroize(retry, J);
        J = next;
      }
      zeroize(J);
    }
    return k;
  } catch (e) {
    zeroize(k);
    throw e;
  } finally {
    zeroize(c);
  }
}
