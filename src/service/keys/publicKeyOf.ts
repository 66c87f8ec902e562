/** Public keys in the form addresses and Turnkey responses use. */
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { publicKeyOf as secp256k1PublicKeyOf } from '../../shared/secp256k1.js';
import { assertNever, type Curve } from './curves.js';
import { assertPrivateKey } from './keyMaterial.js';

/** secp256k1 and P-256: 33-byte SEC1 compressed point; ed25519: the 32-byte RFC 8032 public key. */
export function publicKeyOf(curve: Curve, privateKey: Uint8Array): Uint8Array {
  assertPrivateKey(curve, privateKey);
  switch (curve) {
    case 'CURVE_SECP256K1':
      return secp256k1PublicKeyOf(privateKey, true);
    case 'CURVE_P256':
      return p256.getPublicKey(privateKey, true);
    case 'CURVE_ED25519':
      return ed25519.getPublicKey(privateKey);
    default:
      return assertNever(curve);
  }
}
