import { decodeRawData } from './rawData.js';
import type { TronTransaction } from './types.js';

/**
 * Strictly parses `raw_data` (protobuf `protocol.Transaction.raw`, tronweb's `raw_data_hex`) into a
 * transaction that keeps a private copy of the exact bytes in `rawData`. Throws TRON_MALFORMED_TRANSACTION with
 * a `failed to pre-parse Tron transaction: <field>: <reason>` message on anything non-canonical.
 */
export function parseRawData(bytes: Uint8Array): TronTransaction {
  return decodeRawData(bytes.slice());
}
