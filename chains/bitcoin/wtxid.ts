import { serializeTransaction } from './serializeTransaction.js';
import { hash256 } from './txid.js';
import type { BitcoinTransaction } from './types.js';

/** BIP-141 witness txid in display order; equals the txid when no input carries a witness. */
export function wtxid(tx: BitcoinTransaction): Uint8Array {
  return hash256(serializeTransaction(tx, { witness: true })).reverse();
}
