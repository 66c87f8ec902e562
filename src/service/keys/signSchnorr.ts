import { schnorr } from '@noble/curves/secp256k1.js';
import { zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { publicKeyOf as secp256k1PublicKeyOf } from '../../shared/secp256k1.js';
import { assertDigest32, assertPrivateKey } from './keyMaterial.js';
import type { SignatureOut } from './signature.js';
import { taprootOutputKey, taprootTweakPrivateKey } from './taproot.js';

/** BIP-340 Schnorr over a 32-byte message with the untweaked key: r = R.x, s, v = 0. Fresh aux randomness. */
export function signSchnorr(privateKey: Uint8Array, digest32: Uint8Array): SignatureOut {
  assertPrivateKey('CURVE_SECP256K1', privateKey);
  assertDigest32(digest32);
  // noble verifies the signature it produced before returning it (BIP-340 "default signing" step).
  const sig = schnorr.sign(digest32, privateKey);
  return { r: sig.slice(0, 32), s: sig.slice(32, 64), v: 0 };
}

/**
 * BIP-340 Schnorr for a BIP-86 P2TR key-path spend: signs with the BIP-341-tweaked key (empty script
 * tree) and checks the signature against the output key computed from the public key, which is what the
 * P2TR address commits to, before returning it.
 */
export function signSchnorrTaproot(privateKey: Uint8Array, digest32: Uint8Array): SignatureOut {
  assertPrivateKey('CURVE_SECP256K1', privateKey);
  assertDigest32(digest32);
  const tweaked = taprootTweakPrivateKey(privateKey);
  let sig: Uint8Array;
  try {
    sig = schnorr.sign(digest32, tweaked);
  } finally {
    zeroize(tweaked);
  }
  const outputKey = taprootOutputKey(secp256k1PublicKeyOf(privateKey, true));
  if (!schnorr.verify(sig, digest32, outputKey)) {
    throw new CountersignError(
      'SIGNATURE_VERIFICATION_FAILED',
      'taproot signature does not verify under the output key',
    );
  }
  return { r: sig.slice(0, 32), s: sig.slice(32, 64), v: 0 };
}
