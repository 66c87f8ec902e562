/**
 * secp256k1 ECDSA on the hot path, through the native libsecp256k1 binding of the `secp256k1`
 * package. The package silently falls back to a pure-JS implementation when the addon does not
 * load; we import its `bindings` entry instead, which has no fallback, so a missing addon fails at
 * start-up rather than making every signature ten times slower.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { loadNative } from './loadNative.js';

interface NativeSecp256k1 {
  privateKeyVerify(seckey: Uint8Array): boolean;
  publicKeyCreate(seckey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyConvert(pubkey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyVerify(pubkey: Uint8Array): boolean;
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaVerify(sig: Uint8Array, msg32: Uint8Array, pubkey: Uint8Array): boolean;
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  /** Both tweak functions throw when the tweak is not below n or the result is zero/infinity. */
  publicKeyTweakAdd(pubkey: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  /** In place. */
  privateKeyTweakAdd(seckey: Uint8Array, tweak: Uint8Array): Uint8Array;
  /** In place. */
  privateKeyNegate(seckey: Uint8Array): Uint8Array;
}

const require = createRequire(import.meta.url);

const native = loadNative(
  'libsecp256k1 binding (secp256k1/bindings)',
  () => require('secp256k1/bindings') as NativeSecp256k1,
  'reinstall with install scripts allowed',
);

/** True once the native addon is in use; checked at start-up and in tests. */
export const NATIVE_SECP256K1_LOADED: boolean = typeof native.ecdsaSign === 'function';

/** The curve order n. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;

export interface RecoverableSignature {
  /** 64 bytes r‖s, s low (libsecp256k1 always normalizes). */
  readonly compact: Uint8Array;
  /** Recovery id / y-parity: 0 or 1. */
  readonly recovery: number;
}

export function isValidPrivateKey(seckey: Uint8Array): boolean {
  return seckey.length === 32 && native.privateKeyVerify(seckey);
}

export function publicKeyOf(seckey: Uint8Array, compressed: boolean): Uint8Array {
  return native.publicKeyCreate(seckey, compressed);
}

export function convertPublicKey(pubkey: Uint8Array, compressed: boolean): Uint8Array {
  return native.publicKeyConvert(pubkey, compressed);
}

export function isValidPublicKey(pubkey: Uint8Array): boolean {
  return (pubkey.length === 33 || pubkey.length === 65) && native.publicKeyVerify(pubkey);
}

/** RFC 6979 deterministic ECDSA over a 32-byte digest; low-S with its recovery id. */
export function signDigest(digest: Uint8Array, seckey: Uint8Array): RecoverableSignature {
  const { signature, recid } = native.ecdsaSign(digest, seckey);
  return { compact: signature, recovery: recid };
}

/** Recovers the uncompressed (65-byte) public key, or undefined when the signature is invalid. */
export function recoverPublicKey(
  digest: Uint8Array,
  compact: Uint8Array,
  recovery: number,
  compressed = false,
): Uint8Array | undefined {
  if (compact.length !== 64 || (recovery !== 0 && recovery !== 1) || digest.length !== 32) return undefined;
  if (!isLowS(compact)) return undefined;
  try {
    return native.ecdsaRecover(compact, recovery, digest, compressed);
  } catch {
    return undefined;
  }
}

export function verifyDigest(digest: Uint8Array, compact: Uint8Array, pubkey: Uint8Array): boolean {
  try {
    return native.ecdsaVerify(compact, digest, pubkey);
  } catch {
    return false;
  }
}

/**
 * The recovery id (0 or 1) with which `compact` over `digest` gives back `pubkey` (33 or 65 bytes),
 * or undefined when neither does. Defined exactly when the signature verifies for `pubkey` (low s,
 * R.x below n): recovery computes the same s⁻¹(z·G + r·Q) a verification does, so this check both
 * verifies and yields the parity a DER signature leaves out, in one or two recoveries.
 */
export function recoveryIdOf(digest: Uint8Array, compact: Uint8Array, pubkey: Uint8Array): 0 | 1 | undefined {
  // recoverPublicKey's checks, made once for both ids.
  if (compact.length !== 64 || digest.length !== 32 || !isLowS(compact)) return undefined;
  const compressed = pubkey.length === 33;
  for (const v of [0, 1] as const) {
    let key: Uint8Array;
    try {
      key = native.ecdsaRecover(compact, v, digest, compressed);
    } catch {
      continue;
    }
    if (key.length === pubkey.length && Buffer.compare(key, pubkey) === 0) return v;
  }
  return undefined;
}

/** Ethereum (EIP-2) and Bitcoin (BIP-62/146) only accept s ≤ n/2. */
export function isLowS(compact: Uint8Array): boolean {
  const s = BigInt(`0x${Buffer.from(compact.subarray(32, 64)).toString('hex')}`);
  return s > 0n && s <= HALF_N;
}

/** hash_TapTweak(x) (BIP-340 tagged hash), with the tag's double prefix hashed once. */
const TAP_TWEAK_PREFIX = (() => {
  const tag = createHash('sha256').update('TapTweak').digest();
  return Buffer.concat([tag, tag]);
})();

function tapTweak(xOnly: Uint8Array): Uint8Array {
  return createHash('sha256').update(TAP_TWEAK_PREFIX).update(xOnly).digest();
}

/** Output keys already computed, by x(P): the P2TR address and the signing plan ask for the same keys. */
const OUTPUT_KEYS = new Map<string, Uint8Array>();
const OUTPUT_KEYS_LIMIT = 4096;

/**
 * The BIP-86 (empty script tree) taproot output key of the x-only key `xOnly`, as 32 x-only bytes:
 * Q = lift_x(x) + int(hash_TapTweak(x))·G (BIP-341 taproot_tweak_pubkey), through libsecp256k1.
 * Undefined when x is not on the curve, the tweak is not below n, or Q is the point at infinity.
 */
export function taprootOutputKeyOf(xOnly: Uint8Array): Uint8Array | undefined {
  if (xOnly.length !== 32) return undefined;
  const id = Buffer.from(xOnly).toString('hex');
  const known = OUTPUT_KEYS.get(id);
  if (known !== undefined) return known.slice();
  const lifted = new Uint8Array(33);
  lifted[0] = 0x02;
  lifted.set(xOnly, 1);
  if (!native.publicKeyVerify(lifted)) return undefined;
  let q: Uint8Array;
  try {
    q = native.publicKeyTweakAdd(lifted, tapTweak(xOnly), true);
  } catch {
    return undefined;
  }
  const out = q.slice(1);
  if (OUTPUT_KEYS.size >= OUTPUT_KEYS_LIMIT) OUTPUT_KEYS.clear();
  OUTPUT_KEYS.set(id, out);
  return out.slice();
}

/**
 * BIP-341 taproot_tweak_seckey with an empty script tree: d negated when d·G has odd Y, plus
 * hash_TapTweak(x(d·G)), through libsecp256k1. A new array the caller zeroes; undefined when the
 * tweak is not below n or the result is zero.
 */
export function taprootTweakSeckey(seckey: Uint8Array): Uint8Array | undefined {
  const d = seckey.slice();
  const P = native.publicKeyCreate(d, true);
  try {
    if (P[0] === 0x03) native.privateKeyNegate(d);
    native.privateKeyTweakAdd(d, tapTweak(P.subarray(1)));
    return d;
  } catch {
    d.fill(0);
    return undefined;
  }
}
