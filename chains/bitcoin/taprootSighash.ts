import { CountersignError } from '../../src/shared/errors.js';
import { libTransaction } from './libTransaction.js';
import type { BitcoinTransaction, TxOutput } from './types.js';

/** BIP-341 hash types: DEFAULT, ALL, NONE, SINGLE, each of the last three optionally with ANYONECANPAY. */
const VALID = new Set([0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83]);

/**
 * BIP-341 key-path signature hash (ext_flag 0, no annex), computed by bitcoinjs-lib's
 * `hashForWitnessV1`. `spent` holds the output spent by every input, in input order — the message
 * commits to all amounts and scripts. The checks BIP-341 makes of the request stay here: a valid hash
 * type, every spent output, and SIGHASH_SINGLE only with a matching output.
 */
export function taprootSighash(
  tx: BitcoinTransaction,
  index: number,
  spent: readonly TxOutput[],
  hashType: number,
): Uint8Array {
  if (!VALID.has(hashType))
    throw new CountersignError('INTERNAL', `invalid BIP-341 sighash type ${hashType}`);
  if (tx.inputs[index] === undefined) throw new CountersignError('INTERNAL', `no input ${index}`);
  if (spent.length !== tx.inputs.length) {
    throw new CountersignError('INTERNAL', 'BIP-341 needs the spent output of every input');
  }
  // BIP-341: SIGHASH_SINGLE without a matching output fails (no legacy "one" hash).
  if ((hashType & 0x03) === 0x03 && tx.outputs[index] === undefined)
    throw new CountersignError('INTERNAL', `SIGHASH_SINGLE input ${index} has no output`);
  return libTransaction(tx).hashForWitnessV1(
    index,
    spent.map((s) => s.script),
    spent.map((s) => s.value),
    hashType,
  );
}
