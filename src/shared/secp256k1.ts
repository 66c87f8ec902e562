/**
 * secp256k1 ECDSA on the hot path, through the native libsecp256k1 binding of the `secp256k1`
 * package. The package silently falls back to a pure-JS implementation when the addon does not
 * load; we import its `bindings` entry instead, which has no fallback, so a missing addon fails at
 * start-up rather than making every signature ten times slower.
 */
import { createRequire } from 'node:module';
import { CountersignError } from './errors.js';

interface NativeSecp256k1 {
  privateKeyVerify(seckey: Uint8Array): boolean;
  publicKeyCreate(seckey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyConvert(pubkey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyVerify(pubkey: Uint8Array): boolean;
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaVerify(sig: Uint8Array, msg32: Uint8Array, pubkey: Uint8Array): boolean;
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
}

const require = createRequire(import.meta.url);

function load(): NativeSecp256k1 {
  try {
    return require('secp256k1/bindings') as NativeSecp256k1;
  } catch (cause) {
    throw new CountersignError(
      'INTERNAL',
      'the native libsecp256k1 binding did not load (secp256k1/bindings); reinstall with install scripts allowed',
      { cause },
    );
  }
}

const native = load();

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

/** Ethereum (EIP-2) and Bitcoin (BIP-62/146) only accept s ≤ n/2. */
export function isLowS(compact: Uint8Array): boolean {
  const s = BigInt(`0x${Buffer.from(compact.subarray(32, 64)).toString('hex')}`);
  return s > 0n && s <= HALF_N;
}
