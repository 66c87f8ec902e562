/**
 * Checks one signature returned for a raw payload against the expected signer: ECDSA secp256k1
 * recovery for an Ethereum signer, ed25519 verification (RFC 8032) for a Solana signer.
 */
import { recoverAddress } from '../../chains/ethereum/index.js';
import { verifyEd25519 } from '../../chains/solana/index.js';
import { base58 } from '@scure/base';
import { bytesToHex, concatBytes } from '../shared/encoding.js';
import { CountersignError } from '../shared/errors.js';
import type { ResultSignature } from './activity-result.js';

/** How the signatures of a `sign_with` are checked. */
export type RawSignatureScheme = 'ECDSA_SECP256K1' | 'ED25519';

/**
 * ED25519 when `signWith` is a Solana address (canonical base58 of a 32-byte public key), else
 * ECDSA_SECP256K1. The forms cannot collide: an Ethereum address (`0x…`) and a private-key id
 * (a UUID, with `-`) hold characters outside the base58 alphabet.
 */
export function signatureSchemeOf(signWith: string): RawSignatureScheme {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(signWith);
  } catch {
    return 'ECDSA_SECP256K1';
  }
  return bytes.length === 32 && base58.encode(bytes) === signWith ? 'ED25519' : 'ECDSA_SECP256K1';
}

/**
 * Throws SIGNATURE_VERIFICATION_FAILED unless `sig` is `expectedSigner`'s signature over `digest`:
 * for an Ethereum signer it must recover to it (low-S); for a Solana signer `digest` is the
 * message itself (ed25519 has no pre-hash) and `r‖s` must verify for the key. Returns the signer.
 */
export function verifyDigestSignature(
  digest: Uint8Array,
  sig: ResultSignature,
  expectedSigner: string,
  label: string,
): string {
  if (signatureSchemeOf(expectedSigner) === 'ED25519') {
    if (!verifyEd25519(concatBytes(sig.r, sig.s), digest, base58.decode(expectedSigner))) {
      throw new CountersignError(
        'SIGNATURE_VERIFICATION_FAILED',
        `${label}: the ed25519 signature over the ${digest.length}-byte message does not verify for ${expectedSigner}`,
      );
    }
    return expectedSigner;
  }
  const signer = recoverAddress(digest, sig.r, sig.s, sig.v);
  if (signer === undefined) {
    throw new CountersignError(
      'SIGNATURE_VERIFICATION_FAILED',
      `${label}: the signature over digest ${bytesToHex(digest)} does not recover (invalid or high-S)`,
    );
  }
  if (signer.toLowerCase() !== expectedSigner.toLowerCase()) {
    throw new CountersignError(
      'SIGNATURE_VERIFICATION_FAILED',
      `${label}: the signature recovers ${signer}, not the expected signer ${expectedSigner}`,
    );
  }
  return signer;
}
