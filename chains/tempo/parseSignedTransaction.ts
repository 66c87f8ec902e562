import { CountersignError } from '../../src/shared/errors.js';
import { decodeEnvelope } from './envelope.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { ParsedSignedTempoTransaction } from './types.js';

/**
 * Strictly parses a signed 0x76 envelope (secp256k1 sender signature) into the transaction, the
 * sender preimage its signature commits to, and the sender's and fee payer's signatures.
 */
export function parseSignedTransaction(bytes: Uint8Array): ParsedSignedTempoTransaction {
  const { tx, senderSignature, feePayerSignature } = decodeEnvelope(bytes, 'signed');
  // decodeEnvelope(…, 'signed') always returns a signature; the guard keeps the compiler honest.
  if (senderSignature === undefined) {
    throw new CountersignError('INTERNAL', 'signed envelope decoded without a signature');
  }
  return { tx, unsigned: serializeUnsignedTransaction(tx), senderSignature, feePayerSignature };
}
