import { invalid } from '../../src/shared/errors.js';
import { encodeRlp } from '../ethereum/rlp.js';
import { checkTransaction, senderSlot, transactionItems } from './envelope.js';
import { TEMPO_TX_TYPE, type TempoTransaction } from './types.js';

/**
 * The unsigned serialization, byte-identical to ox `TxEnvelopeTempo.serialize`. It is also the
 * sender's preimage: a sponsored transaction carries the 0x00 fee payer marker and omits
 * `feeToken`, which the sender does not commit to.
 */
export function serializeUnsignedTransaction(tx: TempoTransaction): Uint8Array {
  checkTransaction(tx, (field, reason) => invalid(`tempo.${field}`, reason));
  return encodeRlp(transactionItems(tx, senderSlot(tx), !tx.sponsored), TEMPO_TX_TYPE);
}
