import { decodeEnvelope } from './envelope.js';
import type { EthTransaction } from './types.js';

/**
 * Strictly parses an unsigned serialization: legacy (pre-EIP-155 6 fields or the EIP-155 9-field
 * form), or a 0x01–0x04 typed envelope (0x03 as the bare body). Signed input, trailing bytes,
 * non-canonical RLP and unknown type bytes are rejected.
 */
export function parseUnsignedTransaction(bytes: Uint8Array): EthTransaction {
  return decodeEnvelope(bytes, false).tx;
}
