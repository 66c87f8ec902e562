/** Checks one ECDSA signature over a digest against the expected Ethereum signer. */
import { recoverAddress } from '../../chains/ethereum/index.js';
import { bytesToHex } from '../shared/encoding.js';
import { CountersignError } from '../shared/errors.js';
import type { ResultSignature } from './activity-result.js';

/** Throws SIGNATURE_VERIFICATION_FAILED unless `sig` over `digest` recovers to `expectedSigner`. */
export function verifyDigestSignature(
  digest: Uint8Array,
  sig: ResultSignature,
  expectedSigner: string,
  label: string,
): string {
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
