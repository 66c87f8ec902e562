import { equalBytes } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import type { SolanaTransaction } from './types.js';

/**
 * The signature slot of `signerPubkey` (32 bytes) among the required signers; otherwise
 * SOLANA_SIGNER_NOT_REQUIRED naming `field` (the daemon's `sign_with`, the service's
 * `parameters.signWith`).
 */
export function requiredSignerIndex(
  tx: SolanaTransaction,
  signerPubkey: Uint8Array,
  field = 'sign_with',
): number {
  const required = tx.message.header.numRequiredSignatures;
  for (let i = 0; i < required; i++) {
    const key = tx.message.staticAccountKeys[i];
    if (key !== undefined && equalBytes(key, signerPubkey)) return i;
  }
  throw invalid(field, 'is not a required signer of this transaction', 'SOLANA_SIGNER_NOT_REQUIRED');
}
