import { equalBytes } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import type { SolanaTransaction } from './types.js';

/** The signature slot of `signerPubkey` (32 bytes) among the required signers, or FIELD_INVALID on `sign_with`. */
export function requiredSignerIndex(tx: SolanaTransaction, signerPubkey: Uint8Array): number {
  const required = tx.message.header.numRequiredSignatures;
  for (let i = 0; i < required; i++) {
    const key = tx.message.staticAccountKeys[i];
    if (key !== undefined && equalBytes(key, signerPubkey)) return i;
  }
  throw invalid('sign_with', 'is not a required signer of this transaction');
}
