import { ed25519Verify } from '../../src/shared/ed25519.js';

/**
 * RFC 8032 Ed25519 verification (PureEdDSA, no pre-hash) by libsodium (../../src/shared/ed25519.ts),
 * which rejects a non-canonical S (≥ L), and small-order or non-canonical public keys. False for
 * wrong lengths or a key that is not a point.
 */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  return ed25519Verify(signature, message, publicKey);
}
