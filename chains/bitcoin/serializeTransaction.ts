import { ByteWriter } from './bytes.js';
import type { BitcoinTransaction } from './types.js';

/** True when some input carries a witness, i.e. the network form is BIP-144 segwit. */
export function hasWitness(tx: BitcoinTransaction): boolean {
  return tx.inputs.some((i) => i.witness.length > 0);
}

/**
 * Serializes `tx`: with `witness` and at least one non-empty witness the BIP-144 form (marker 0x00,
 * flag 0x01, witnesses after the outputs), otherwise the legacy form that txids hash.
 */
export function serializeTransaction(tx: BitcoinTransaction, options: { witness: boolean }): Uint8Array {
  const segwit = options.witness && hasWitness(tx);
  const w = new ByteWriter().i32(tx.version);
  if (segwit) w.u8(0x00).u8(0x01);
  w.compactSize(tx.inputs.length);
  for (const i of tx.inputs) w.bytes(i.prevTxid).u32(i.vout).varBytes(i.scriptSig).u32(i.sequence);
  w.compactSize(tx.outputs.length);
  for (const o of tx.outputs) w.u64(o.value).varBytes(o.script);
  if (segwit) {
    for (const i of tx.inputs) {
      w.compactSize(i.witness.length);
      for (const item of i.witness) w.varBytes(item);
    }
  }
  return w.u32(tx.locktime).finish();
}
