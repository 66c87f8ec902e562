import { decodeEnvelope } from './envelope.js';
import type { TempoTransaction } from './types.js';

/**
 * Strictly parses an unsigned 0x76 serialization (viem/tempo `Transaction.serialize(tx)`, ox
 * `TxEnvelopeTempo.serialize`). Rejects other type bytes, trailing bytes, non-canonical RLP, an
 * empty calls list, valid_before <= valid_after, signatures, key authorizations and authorization
 * lists.
 */
export function parseUnsignedTransaction(bytes: Uint8Array): TempoTransaction {
  return decodeEnvelope(bytes, 'unsigned').tx;
}
