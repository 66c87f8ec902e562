import { encodeRawData } from './rawData.js';
import type { TronTransaction } from './types.js';

/**
 * Encodes `raw_data` from the transaction model (not from `rawData`): for a parsed transaction the
 * result equals the parsed bytes. Signing and hashing always use `tx.rawData`, never this.
 */
export function serializeRawData(tx: Omit<TronTransaction, 'rawData'>): Uint8Array {
  return encodeRawData(tx);
}
