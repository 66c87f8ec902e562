import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { CountersignError } from '../../src/shared/errors.js';
import { ByteWriter } from './bytes.js';
import type { BitcoinTransaction, TxOutput } from './types.js';

/** BIP-341 hash types: DEFAULT, ALL, NONE, SINGLE, each of the last three optionally with ANYONECANPAY. */
const VALID = new Set([0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83]);

/**
 * BIP-341 key-path signature hash (ext_flag 0, no annex): hash_TapSighash(0x00 ‖ SigMsg). `spent` holds
 * the output spent by every input, in input order — the message commits to all amounts and scripts.
 * All BIP-341 hash types are computed (the BIP's vectors cover them); the signer only plans DEFAULT and ALL.
 */
export function taprootSighash(
  tx: BitcoinTransaction,
  index: number,
  spent: readonly TxOutput[],
  hashType: number,
): Uint8Array {
  if (!VALID.has(hashType))
    throw new CountersignError('INTERNAL', `invalid BIP-341 sighash type ${hashType}`);
  const input = tx.inputs[index];
  if (input === undefined) throw new CountersignError('INTERNAL', `no input ${index}`);
  if (spent.length !== tx.inputs.length) {
    throw new CountersignError('INTERNAL', 'BIP-341 needs the spent output of every input');
  }
  const base = hashType & 0x03;
  const anyoneCanPay = (hashType & 0x80) !== 0;
  const m = new ByteWriter().u8(0x00).u8(hashType).i32(tx.version).u32(tx.locktime);
  if (!anyoneCanPay) {
    const prevouts = new ByteWriter();
    const amounts = new ByteWriter();
    const scripts = new ByteWriter();
    const sequences = new ByteWriter();
    tx.inputs.forEach((inp, i) => {
      const s = spent[i] as TxOutput;
      prevouts.bytes(inp.prevTxid).u32(inp.vout);
      amounts.u64(s.value);
      scripts.varBytes(s.script);
      sequences.u32(inp.sequence);
    });
    m.bytes(sha256(prevouts.finish()))
      .bytes(sha256(amounts.finish()))
      .bytes(sha256(scripts.finish()))
      .bytes(sha256(sequences.finish()));
  }
  // SIGHASH_NONE (2) and SIGHASH_SINGLE (3) skip the all-outputs hash; DEFAULT (0) and ALL (1) include it.
  if (base !== 0x02 && base !== 0x03) {
    const outputs = new ByteWriter();
    for (const o of tx.outputs) outputs.u64(o.value).varBytes(o.script);
    m.bytes(sha256(outputs.finish()));
  }
  m.u8(0x00); // spend_type: ext_flag 0 (key path), no annex
  if (anyoneCanPay) {
    const s = spent[index] as TxOutput;
    m.bytes(input.prevTxid).u32(input.vout).u64(s.value).varBytes(s.script).u32(input.sequence);
  } else {
    m.u32(index);
  }
  if (base === 0x03) {
    const out = tx.outputs[index];
    // BIP-341: SIGHASH_SINGLE without a matching output fails (no legacy "one" hash).
    if (out === undefined)
      throw new CountersignError('INTERNAL', `SIGHASH_SINGLE input ${index} has no output`);
    m.bytes(sha256(new ByteWriter().u64(out.value).varBytes(out.script).finish()));
  }
  return schnorr.utils.taggedHash('TapSighash', m.finish());
}
