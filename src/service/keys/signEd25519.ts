import { CountersignError } from '../../shared/errors.js';
import { ed25519Sign } from '../../shared/ed25519.js';
import { assertPrivateKey } from './keyMaterial.js';
import type { SignatureOut } from './signature.js';

/**
 * RFC 8032 Ed25519 over the message itself (EdDSA hashes internally): r = R, s = S, v = 0.
 * libsodium from the seed (../../shared/ed25519.ts), its expanded secret key zeroed after use.
 */
export function signEd25519(privateKey: Uint8Array, message: Uint8Array): SignatureOut {
  assertPrivateKey('CURVE_ED25519', privateKey);
  if (!(message instanceof Uint8Array))
    throw new CountersignError('PAYLOAD_INVALID', 'message must be bytes');
  const sig = ed25519Sign(privateKey, message);
  return { r: sig.slice(0, 32), s: sig.slice(32, 64), v: 0 };
}
