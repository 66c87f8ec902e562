import { invalid } from '../../src/shared/errors.js';
import { encodeRlp, uintToBytes, type RlpInput } from '../ethereum/rlp.js';
import { checkTransaction, senderSlot, transactionItems } from './envelope.js';
import { TEMPO_TX_TYPE, type TempoSignature, type TempoTransaction } from './types.js';

/**
 * The signed envelope (ox `TxEnvelopeTempo.serialize(tx, {signature, feePayerSignature})`). The
 * sender's signature is the secp256k1 form of ox `SignatureEnvelope`: 65 bytes r ‖ s ‖ v, v = 27/28.
 * For a sponsored transaction, without `feePayerSig` this is the sender-signed hand-off (0x00 marker,
 * no fee token); with it, the broadcastable envelope with the fee token and [yParity, r, s].
 */
export function assemble(
  tx: TempoTransaction,
  senderSig: TempoSignature,
  feePayerSig?: TempoSignature,
): Uint8Array {
  checkTransaction(tx, (field, reason) => invalid(`tempo.${field}`, reason));
  const sender = checked(senderSig, 'signature');
  let slot: RlpInput = senderSlot(tx);
  if (feePayerSig !== undefined) {
    if (!tx.sponsored) {
      throw invalid(
        'fee_payer_signature',
        'the transaction is not sponsored; it takes no fee payer signature',
      );
    }
    const fp = checked(feePayerSig, 'fee_payer_signature');
    slot = [uintToBytes(BigInt(fp.yParity)), fp.r, fp.s];
  }
  const signature = new Uint8Array(65);
  signature.set(sender.r, 32 - sender.r.length);
  signature.set(sender.s, 64 - sender.s.length);
  signature[64] = 27 + sender.yParity;
  const items = transactionItems(tx, slot, !tx.sponsored || feePayerSig !== undefined);
  items.push(signature);
  return encodeRlp(items, TEMPO_TX_TYPE);
}

/** Checks the parity and widths; returns r and s without leading zeros (canonical RLP integers). */
function checked(sig: TempoSignature, field: string): TempoSignature {
  if (sig.yParity !== 0 && sig.yParity !== 1) throw invalid(`${field}.v`, 'y-parity must be 0 or 1');
  return { yParity: sig.yParity, r: minimal(sig.r, `${field}.r`), s: minimal(sig.s, `${field}.s`) };
}

function minimal(value: Uint8Array, field: string): Uint8Array {
  if (value.length > 32) throw invalid(field, `must be at most 32 bytes, got ${value.length}`);
  let i = 0;
  while (i < value.length && value[i] === 0) i++;
  return value.subarray(i);
}
