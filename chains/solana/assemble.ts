import { invalid } from '../../src/shared/errors.js';
import { requiredSignerIndex } from './requiredSignerIndex.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import { SIGNATURE_LENGTH, type SolanaTransaction } from './types.js';

/**
 * The wire transaction with `signature64` in the slot of `signerPubkey` and every other slot kept
 * byte for byte (partial signing: other signers may have signed already, or sign later).
 */
export function assemble(
  tx: SolanaTransaction,
  signerPubkey: Uint8Array,
  signature64: Uint8Array,
): Uint8Array {
  if (signature64.length !== SIGNATURE_LENGTH) {
    throw invalid('signature', `an ed25519 signature is 64 bytes (r‖s), got ${signature64.length}`);
  }
  const slot = requiredSignerIndex(tx, signerPubkey);
  const signatures = tx.signatures.map((s, i) => (i === slot ? signature64.slice() : s));
  return serializeWireTransaction({ ...tx, signatures });
}
