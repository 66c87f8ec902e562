import { decodeFields, malformed } from './protobuf.js';
import { parseRawData } from './parseRawData.js';
import type { ParsedSignedTronTransaction } from './types.js';

/** Length of one Tron signature: r ‖ s ‖ v. */
const SIGNATURE_LENGTH = 65;

/**
 * Strictly parses a signed `protocol.Transaction` as `/wallet/broadcasthex` takes it: `raw_data`
 * (field 1, once) and one or more 65-byte `signature`s (field 2), nothing else (no `ret`, which
 * only a node fills in).
 */
export function parseSignedTransaction(bytes: Uint8Array): ParsedSignedTronTransaction {
  let rawData: Uint8Array | undefined;
  const signatures: Uint8Array[] = [];
  for (const f of decodeFields(bytes, 'transaction')) {
    if (f.wireType !== 2) throw malformed('transaction', `field ${f.field} has wire type ${f.wireType}`);
    if (f.field === 1) {
      if (rawData !== undefined) throw malformed('raw_data', 'appears more than once');
      rawData = f.value;
    } else if (f.field === 2) {
      if (f.value.length !== SIGNATURE_LENGTH) {
        throw malformed(
          `signature[${signatures.length}]`,
          `must be ${SIGNATURE_LENGTH} bytes, got ${f.value.length}`,
        );
      }
      signatures.push(f.value.slice());
    } else {
      throw malformed('transaction', `field ${f.field} is not accepted in a signed transaction to broadcast`);
    }
  }
  if (rawData === undefined) throw malformed('raw_data', 'is required');
  if (signatures.length === 0) throw malformed('signature', 'the transaction is not signed');
  const tx = parseRawData(rawData);
  return { tx, rawData: tx.rawData, signatures };
}
