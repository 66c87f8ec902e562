import { CountersignError } from '../../src/shared/errors.js';
import { ByteWriter } from './bytes.js';
import { hash256 } from './txid.js';
import { SIGHASH_ALL, type BitcoinTransaction } from './types.js';

/**
 * BIP-143 signature hash for SIGHASH_ALL. `scriptCode` for P2WPKH is the P2PKH script of the key hash;
 * `amount` is the spent output's value, which BIP-143 commits to so a lying PSBT cannot inflate the fee.
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
  const input = tx.inputs[index];
  if (input === undefined) throw new CountersignError('INTERNAL', `no input ${index}`);
  const prevouts = new ByteWriter();
  const sequences = new ByteWriter();
  for (const i of tx.inputs) {
    prevouts.bytes(i.prevTxid).u32(i.vout);
    sequences.u32(i.sequence);
  }
  const outputs = new ByteWriter();
  for (const o of tx.outputs) outputs.u64(o.value).varBytes(o.script);
  const preimage = new ByteWriter()
    .i32(tx.version)
    .bytes(hash256(prevouts.finish()))
    .bytes(hash256(sequences.finish()))
    .bytes(input.prevTxid)
    .u32(input.vout)
    .varBytes(scriptCode)
    .u64(amount)
    .u32(input.sequence)
    .bytes(hash256(outputs.finish()))
    .u32(tx.locktime)
    .u32(hashType)
    .finish();
  return hash256(preimage);
}
