import { ByteReader, malformed } from './bytes.js';
import { parseTransaction } from './parseTransaction.js';
import { assertUniqueKeys, checkGlobalXpub, decodeInput, decodeOutput, GLOBAL_V2_ONLY } from './psbtMaps.js';
import type { BitcoinTransaction, Psbt, PsbtEntry } from './types.js';

/** "psbt" ‖ 0xff (BIP-174). */
export const PSBT_MAGIC = Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff);

/** Reads key-value pairs up to the 0x00 separator. */
function readMap(r: ByteReader, what: string): PsbtEntry[] {
  r.field = what;
  const entries: PsbtEntry[] = [];
  for (;;) {
    const keyLen = r.compactSize(`${what} key length`);
    if (keyLen === 0) return entries;
    const key = r.bytes(keyLen, `${what} key`);
    const value = r.varBytes(`${what} value`);
    entries.push({ key, value });
  }
}

/**
 * Strict BIP-174 version 0 decode: magic, unique keys, known fields well-formed, one map per unsigned-tx
 * input and output, no trailing bytes; the unsigned transaction is in legacy form with empty scriptSigs
 * and no witnesses. Unknown pairs are kept verbatim so {@link serializePsbt} reproduces the input exactly.
 */
export function parsePsbt(bytes: Uint8Array): Psbt {
  const r = new ByteReader(bytes, 'psbt');
  for (let i = 0; i < PSBT_MAGIC.length; i++) {
    if (r.u8('magic') !== PSBT_MAGIC[i]) throw malformed('psbt', 'does not start with the magic "psbt" 0xff');
  }
  const globalEntries = readMap(r, 'global');
  assertUniqueKeys(globalEntries, 'global');
  let unsignedTx: BitcoinTransaction | undefined;
  for (const e of globalEntries) {
    const type = e.key[0] as number;
    if (type === 0x00) {
      if (e.key.length !== 1) throw malformed('global.unsigned_tx', 'key must be the type byte alone');
      unsignedTx = parseTransaction(e.value, { field: 'global.unsigned_tx', allowWitness: false });
    } else if (type === 0x01) {
      checkGlobalXpub(e);
    } else if (type === 0xfb) {
      const vr = new ByteReader(e.value, 'global.version');
      if (e.key.length !== 1) throw malformed('global.version', 'key must be the type byte alone');
      const version = vr.u32('version');
      vr.end();
      if (version !== 0)
        throw malformed('global.version', `PSBT version ${version} is not supported (only 0)`);
    } else if (GLOBAL_V2_ONLY.has(type)) {
      throw malformed('global', `key type 0x${type.toString(16)} is PSBTv2-only (BIP-370)`);
    }
  }
  if (unsignedTx === undefined) throw malformed('global.unsigned_tx', 'is missing');
  unsignedTx.inputs.forEach((inp, i) => {
    if (inp.scriptSig.length > 0)
      throw malformed('global.unsigned_tx', `inputs[${i}] has a non-empty scriptSig`);
  });
  const tx = unsignedTx;
  const inputs = tx.inputs.map((_, i) => decodeInput(readMap(r, `inputs[${i}]`), i, tx));
  const outputs = tx.outputs.map((_, i) => decodeOutput(readMap(r, `outputs[${i}]`), i));
  r.field = 'psbt';
  r.end();
  return { global: { entries: globalEntries, unsignedTx: tx }, inputs, outputs };
}
