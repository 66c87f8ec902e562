import { base58 } from '@scure/base';
import { CountersignError } from '../../src/shared/errors.js';
import { parseWireTransaction } from './parseWireTransaction.js';

/** The transaction id: base58 of signature slot 0, the fee payer's. Refuses while that slot is still zero. */
export function transactionId(signedWire: Uint8Array): string {
  const first = parseWireTransaction(signedWire).signatures[0];
  if (first === undefined || first.every((b) => b === 0)) {
    throw new CountersignError(
      'PAYLOAD_INVALID',
      'the fee payer (signature slot 0) has not signed, so the transaction has no id yet',
    );
  }
  return base58.encode(first);
}
