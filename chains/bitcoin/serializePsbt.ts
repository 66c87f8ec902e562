import { ByteWriter } from './bytes.js';
import { PSBT_MAGIC } from './parsePsbt.js';
import type { Psbt, PsbtEntry } from './types.js';

function writeMap(w: ByteWriter, entries: readonly PsbtEntry[]): void {
  for (const e of entries) w.varBytes(e.key).varBytes(e.value);
  w.u8(0x00);
}

/** BIP-174 serialization from the raw pairs, in their order: a parsed PSBT comes back byte for byte. */
export function serializePsbt(psbt: Psbt): Uint8Array {
  const w = new ByteWriter().bytes(PSBT_MAGIC);
  writeMap(w, psbt.global.entries);
  for (const i of psbt.inputs) writeMap(w, i.entries);
  for (const o of psbt.outputs) writeMap(w, o.entries);
  return w.finish();
}
