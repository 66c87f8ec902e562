/**
 * RFC 8032 Ed25519 (PureEdDSA) through libsodium, from the `sodium-native` package's prebuilt addon.
 *
 * node:crypto signs only with a key object, and building one from a PKCS#8 seed costs ~370 µs here
 * (OpenSSL 3's decoder, plus the public key's scalar multiplication); a key object kept between
 * signatures would keep the key decrypted. libsodium signs from the 32-byte seed in a buffer we
 * own and zero: ~35 µs, the public key derived each time (never taken from storage: a signature
 * made with a mismatched public key can leak the secret scalar). Its verification (~50 µs against
 * ~110 µs) rejects non-canonical S like OpenSSL, and also small-order and non-canonical public keys,
 * which no key of ours is. The addon is loaded through node-gyp-build, the prebuild for this
 * platform; a missing addon fails at start-up.
 */
import { createRequire } from 'node:module';
import { isNativeFunction, loadNative } from './loadNative.js';

interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, message: Uint8Array, sk: Uint8Array): void;
  crypto_sign_verify_detached(sig: Uint8Array, message: Uint8Array, pk: Uint8Array): boolean;
  sodium_memzero(buf: Uint8Array): void;
}

const require = createRequire(import.meta.url);

const sodium = loadNative(
  'libsodium addon (sodium-native prebuild)',
  () => require('sodium-native') as Sodium,
);

/** Whether the signing function is the addon's (native code), not JavaScript; checked in tests. */
export const NATIVE_ED25519_LOADED: boolean = isNativeFunction(sodium.crypto_sign_detached);

const SEED_LENGTH = 32;
const SIGNATURE_LENGTH = 64;
const PUBLIC_KEY_LENGTH = 32;

/** The 64-byte Ed25519 signature of `message` by the key whose 32-byte seed is `seed`. */
export function ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  if (seed.length !== SEED_LENGTH) throw new RangeError('an Ed25519 seed is 32 bytes');
  const publicKey = new Uint8Array(PUBLIC_KEY_LENGTH);
  // libsodium's secret key: the seed followed by the public key. Zeroed before it is let go.
  const secretKey = new Uint8Array(SEED_LENGTH + PUBLIC_KEY_LENGTH);
  const signature = new Uint8Array(SIGNATURE_LENGTH);
  try {
    sodium.crypto_sign_seed_keypair(publicKey, secretKey, seed);
    sodium.crypto_sign_detached(signature, message, secretKey);
  } finally {
    sodium.sodium_memzero(secretKey);
  }
  return signature;
}

/** Whether `signature` is `publicKey`'s Ed25519 signature of `message`; false for wrong lengths. */
export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_LENGTH || publicKey.length !== PUBLIC_KEY_LENGTH) return false;
  return sodium.crypto_sign_verify_detached(signature, message, publicKey);
}
