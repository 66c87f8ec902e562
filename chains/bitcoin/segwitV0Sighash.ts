import { CountersignError } from '../../src/shared/errors.js';
import { libTransaction } from './libTransaction.js';
import { SIGHASH_ALL, type BitcoinTransaction } from './types.js';

/**
 * BIP-143 signature hash for SIGHASH_ALL, computed by bitcoinjs-lib's `hashForWitnessV0`. `scriptCode`
 * for P2WPKH is the P2PKH script of the key hash; `amount` is the spent output's value, which BIP-143
 * commits to so a lying PSBT cannot inflate the fee.
 */
export function segwitV0Sighash(
  tx: BitcoinTransaction,
  index: number,
  scriptCode: Uint8Array,
  amount: bigint,
  hashType: number,
): Uint8Array {
  if (hashType !== SIGHASH_ALL) {
    throw new CountersignError(
      'INTERNAL',
      `BIP-143 sighash type ${hashType} is refused: only SIGHASH_ALL is signed`,
    );
  }
  if (tx.inputs[index] === undefined) throw new CountersignError('INTERNAL', `no input ${index}`);
  return libTransaction(tx).hashForWitnessV0(index, scriptCode, amount, hashType);
}
