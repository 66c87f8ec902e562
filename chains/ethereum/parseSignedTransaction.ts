import { bigintToFixed } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import { decodeEnvelope } from './envelope.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { ParsedSignedTransaction } from './types.js';

/**
 * Strictly parses a signed serialization into the transaction, the unsigned serialization its
 * signature commits to, and the signature (r, s as 32-byte values, yParity 0/1; a legacy v is
 * resolved into chain id and parity).
 */
export function parseSignedTransaction(bytes: Uint8Array): ParsedSignedTransaction {
  const { tx, signature } = decodeEnvelope(bytes, true);
  // decodeEnvelope(…, true) always returns a signature; the guard keeps the compiler honest.
  if (signature === undefined)
    throw new CountersignError('INTERNAL', 'signed envelope decoded without a signature');
  return {
    tx,
    unsigned: serializeUnsignedTransaction(tx),
    r: bigintToFixed(signature.r, 32),
    s: bigintToFixed(signature.s, 32),
    yParity: signature.yParity,
  };
}
