import { CountersignError } from '../../src/shared/errors.js';
import { libTransaction } from './libTransaction.js';
import { SIGHASH_ALL, type BitcoinTransaction } from './types.js';

/**
 * Pre-segwit signature hash (Bitcoin Core SignatureHash, SIGVERSION_BASE), computed by bitcoinjs-lib's
 * `hashForSignature`, for SIGHASH_ALL only; `scriptCode` is the spent P2PKH scriptPubKey.
 */
export function legacySighash(
  tx: BitcoinTransaction,
  index: number,
  scriptCode: Uint8Array,
  hashType: number,
): Uint8Array {
  if (hashType !== SIGHASH_ALL) {
    throw new CountersignError(
      'INTERNAL',
      `legacy sighash type ${hashType} is refused: only SIGHASH_ALL is signed`,
    );
  }
  if (index < 0 || index >= tx.inputs.length) throw new CountersignError('INTERNAL', `no input ${index}`);
  return libTransaction(tx).hashForSignature(index, scriptCode, hashType);
}
