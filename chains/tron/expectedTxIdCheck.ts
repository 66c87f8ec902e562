import { bytesToHex, equalBytes } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import { txId } from './txId.js';

const TXID_RE = /^(0x)?[0-9a-fA-F]{64}$/;

/**
 * Checks a txID the caller supplied (hex, optional 0x, any case) against sha256(rawData) and returns
 * the computed one. countersign never takes a txID from a caller; it only compares one it was given.
 * A malformed id is FIELD_INVALID, a different one TRON_TXID_MISMATCH, both on `field`.
 */
export function expectedTxIdCheck(rawData: Uint8Array, txIdHex: string, field: string): Uint8Array {
  if (!TXID_RE.test(txIdHex)) throw invalid(field, 'must be a 32-byte hex transaction id');
  const computed = txId(rawData);
  const given = new Uint8Array(Buffer.from(txIdHex.replace(/^0x/, ''), 'hex'));
  if (!equalBytes(computed, given)) {
    throw invalid(field, `does not match sha256(raw_data) = ${bytesToHex(computed)}`, 'TRON_TXID_MISMATCH');
  }
  return computed;
}
