import type { DigestToSign } from '../types.js';
import { requiredSignerIndex } from './requiredSignerIndex.js';
import type { SolanaTransaction } from './types.js';

/**
 * What `signerPubkey` must sign: the message bytes themselves, ed25519 without a pre-hash
 * (HASH_FUNCTION_NOT_APPLICABLE). Throws SOLANA_SIGNER_NOT_REQUIRED on `sign_with` if it is not a required signer.
 */
export function digests(tx: SolanaTransaction, signerPubkey: Uint8Array): DigestToSign[] {
  requiredSignerIndex(tx, signerPubkey);
  return [{ scheme: 'ED25519', payload: tx.messageBytes }];
}
