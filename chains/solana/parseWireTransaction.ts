import { malformed } from './malformed.js';
import { parseMessage } from './parseMessage.js';
import { Reader } from './reader.js';
import { MAX_TRANSACTION_SIZE, SIGNATURE_LENGTH, type SolanaTransaction } from './types.js';

/**
 * Strictly decodes a wire transaction (compact-u16 signature count, 64-byte slots, message), legacy
 * or v0, signed, partly signed or with zeroed slots. The slot count must equal the header's
 * numRequiredSignatures, and the whole transaction must fit in 1232 bytes (what a node accepts).
 */
export function parseWireTransaction(bytes: Uint8Array): SolanaTransaction {
  if (bytes.length === 0) throw malformed('transaction', 'input is empty');
  if (bytes.length > MAX_TRANSACTION_SIZE) {
    throw malformed('transaction', `${bytes.length} bytes exceed the ${MAX_TRANSACTION_SIZE}-byte limit`);
  }
  const reader = new Reader(bytes);
  const count = reader.length('signatures');
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < count; i++) signatures.push(reader.take(SIGNATURE_LENGTH, `signatures[${i}]`));
  const messageBytes = bytes.slice(reader.offset);
  const message = parseMessage(messageBytes);
  if (count !== message.header.numRequiredSignatures) {
    throw malformed(
      'signatures',
      `${count} signature slot(s) but the message requires ${message.header.numRequiredSignatures}`,
    );
  }
  return { message, messageBytes, signatures };
}
