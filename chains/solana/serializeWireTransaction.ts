import { concatBytes } from '../../src/shared/encoding.js';
import { malformed } from './malformed.js';
import { encodeShortVec } from './shortVec.js';
import { MAX_TRANSACTION_SIZE, SIGNATURE_LENGTH, type SolanaTransaction } from './types.js';

/**
 * Encodes a wire transaction from its exact message bytes and its signature slots (kept as they
 * are, zero or not). Refuses a slot count that differs from the header's and a result above 1232 bytes.
 */
export function serializeWireTransaction(tx: SolanaTransaction): Uint8Array {
  const required = tx.message.header.numRequiredSignatures;
  if (tx.signatures.length !== required) {
    throw malformed(
      'signatures',
      `${tx.signatures.length} signature slot(s) but the message requires ${required}`,
    );
  }
  tx.signatures.forEach((s, i) => {
    if (s.length !== SIGNATURE_LENGTH) throw malformed(`signatures[${i}]`, 'must be 64 bytes');
  });
  const wire = concatBytes(encodeShortVec(required), ...tx.signatures, tx.messageBytes);
  if (wire.length > MAX_TRANSACTION_SIZE) {
    throw malformed('transaction', `${wire.length} bytes exceed the ${MAX_TRANSACTION_SIZE}-byte limit`);
  }
  return wire;
}
