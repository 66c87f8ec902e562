import { keccak_256 } from '../../src/shared/keccak.js';
import { invalid } from '../../src/shared/errors.js';
import { encodeRlp } from '../ethereum/rlp.js';
import { parseAddress } from '../ethereum/index.js';
import { checkTransaction, transactionItems } from './envelope.js';
import { FEE_PAYER_MAGIC, type TempoTransaction } from './types.js';

/**
 * What the fee payer signs (ox `TxEnvelopeTempo.getFeePayerSignPayload`): keccak256 of
 * 0x78 ‖ rlp([… the transaction fields with `feeToken`, the sender's address in the fee payer
 * slot …]). The 0x78 domain byte keeps it from ever being a sender digest, and naming the sender
 * binds the fee payer to one account.
 */
export function feePayerDigest(tx: TempoTransaction, sender: string | Uint8Array): Uint8Array {
  if (!tx.sponsored) {
    throw invalid('tempo.sponsored', 'the transaction is not sponsored; it has no fee payer to sign');
  }
  checkTransaction(tx, (field, reason) => invalid(`tempo.${field}`, reason));
  let senderBytes: Uint8Array;
  if (typeof sender === 'string') {
    senderBytes = parseAddress(sender, 'sender');
  } else {
    if (sender.length !== 20) throw invalid('sender', `must be 20 bytes, got ${sender.length}`);
    senderBytes = sender;
  }
  return keccak_256(encodeRlp(transactionItems(tx, senderBytes, true), FEE_PAYER_MAGIC));
}
