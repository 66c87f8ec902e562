import { CountersignError } from '../../src/shared/errors.js';
import { ByteWriter } from './bytes.js';
import { hash256 } from './txid.js';
import { SIGHASH_ALL, type BitcoinTransaction } from './types.js';

/**
 * Pre-segwit signature hash (Bitcoin Core SignatureHash, SIGVERSION_BASE) for SIGHASH_ALL only: the
 * legacy serialization with every scriptSig emptied except input `index`'s, which carries `scriptCode`
 * (the spent P2PKH scriptPubKey; it has no OP_CODESEPARATOR), then the 4-byte type, double SHA-256.
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
  const w = new ByteWriter().i32(tx.version).compactSize(tx.inputs.length);
  tx.inputs.forEach((inp, i) => {
    w.bytes(inp.prevTxid).u32(inp.vout);
    w.varBytes(i === index ? scriptCode : new Uint8Array(0));
    w.u32(inp.sequence);
  });
  w.compactSize(tx.outputs.length);
  for (const o of tx.outputs) w.u64(o.value).varBytes(o.script);
  w.u32(tx.locktime).u32(hashType);
  return hash256(w.finish());
}
