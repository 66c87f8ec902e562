/** Fresh random private keys for standalone (non-HD) keys. */
import { randomFillSync } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { zeroize } from '../../shared/encoding.js';
import { isValidPrivateKey as isValidSecp256k1Key } from '../../shared/secp256k1.js';
import { assertNever, type Curve } from './curves.js';

/** 32 bytes from the OS CSPRNG; for secp256k1 and P-256 redrawn until it is a scalar in [1, n-1]. */
export function generatePrivateKey(curve: Curve): Uint8Array {
  switch (curve) {
    case 'CURVE_ED25519':
      // RFC 8032 §5.1.5: the private key is 32 random bytes.
      return randomFillSync(new Uint8Array(32));
    case 'CURVE_SECP256K1':
      return drawScalar(isValidSecp256k1Key);
    case 'CURVE_P256':
      return drawScalar((k) => p256.utils.isValidSecretKey(k));
    default:
      return assertNever(curve);
  }
}

/** Rejection sampling keeps the scalar uniform; a redraw happens with probability below 2^-32. */
function drawScalar(isValid: (k: Uint8Array) => boolean): Uint8Array {
  for (;;) {
    const k = randomFillSync(new Uint8Array(32));
    if (isValid(k)) return k;
    zeroize(k);
  }
}
