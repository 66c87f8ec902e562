import { ByteReader, malformed } from './bytes.js';
import { MAX_MONEY, type BitcoinTransaction, type TxInput, type TxOutput } from './types.js';

/** Smallest serialized input (32 txid + 4 vout + 1 script length + 4 sequence) and output (8 + 1). */
const MIN_INPUT = 41;
const MIN_OUTPUT = 9;

export interface ParseTransactionOptions {
  /** Names the bytes in errors (`global.unsigned_tx`, `inputs[2].non_witness_utxo`). */
  readonly field: string;
  /**
   * Accept the BIP-144 segwit serialization. PSBT_GLOBAL_UNSIGNED_TX must use the legacy form (BIP-174),
   * where a zero byte after the version is an input count of 0, never the segwit marker.
   */
  readonly allowWitness: boolean;
}

/** Reads one transaction from `r` (used inside PSBT maps and by {@link parseTransaction}). */
export function readTransaction(r: ByteReader, allowWitness: boolean): BitcoinTransaction {
  const version = r.i32('version');
  let segwit = false;
  if (allowWitness && r.peek() === 0x00) {
    r.u8('segwit marker');
    const flag = r.u8('segwit flag');
    // BIP-144: flag must be 1; Bitcoin Core rejects other values ("Unknown transaction optional data").
    if (flag !== 0x01) throw malformed(r.field, `segwit flag must be 0x01, got 0x${flag.toString(16)}`);
    segwit = true;
  }
  const nIn = r.count('input count', MIN_INPUT);
  if (segwit && nIn === 0) throw malformed(r.field, 'a segwit transaction has no inputs');
  const inputs: { prevTxid: Uint8Array; vout: number; scriptSig: Uint8Array; sequence: number }[] = [];
  for (let i = 0; i < nIn; i++) {
    const prevTxid = r.bytes(32, `inputs[${i}] previous txid`);
    const vout = r.u32(`inputs[${i}] vout`);
    const scriptSig = r.varBytes(`inputs[${i}] scriptSig`);
    const sequence = r.u32(`inputs[${i}] sequence`);
    inputs.push({ prevTxid, vout, scriptSig, sequence });
  }
  const nOut = r.count('output count', MIN_OUTPUT);
  const outputs: TxOutput[] = [];
  for (let i = 0; i < nOut; i++) {
    const value = r.u64(`outputs[${i}] value`);
    if (value > MAX_MONEY) throw malformed(r.field, `outputs[${i}] value ${value} exceeds 21 million BTC`);
    const script = r.varBytes(`outputs[${i}] scriptPubKey`);
    outputs.push({ value, script });
  }
  const witnesses: Uint8Array[][] = inputs.map(() => []);
  if (segwit) {
    let any = false;
    for (let i = 0; i < nIn; i++) {
      const items = r.count(`inputs[${i}] witness item count`, 1);
      const stack: Uint8Array[] = [];
      for (let j = 0; j < items; j++) stack.push(r.varBytes(`inputs[${i}] witness item ${j}`));
      if (items > 0) any = true;
      witnesses[i] = stack;
    }
    // Bitcoin Core: "Superfluous witness record"; keeps the serialization canonical.
    if (!any) throw malformed(r.field, 'segwit serialization with only empty witnesses');
  }
  const locktime = r.u32('locktime');
  // Written out, not {...inp, witness}: a spread followed by a new property costs this V8 (Node 20) a
  // new hidden class on every call.
  const txInputs: TxInput[] = inputs.map((inp, i) => ({
    prevTxid: inp.prevTxid,
    vout: inp.vout,
    scriptSig: inp.scriptSig,
    sequence: inp.sequence,
    witness: witnesses[i] ?? [],
  }));
  return { version, inputs: txInputs, outputs, locktime };
}

/** Strict decode of a whole transaction (legacy or, when allowed, BIP-144 segwit); rejects trailing bytes. */
export function parseTransaction(bytes: Uint8Array, options: ParseTransactionOptions): BitcoinTransaction {
  const r = new ByteReader(bytes, options.field);
  const tx = readTransaction(r, options.allowWitness);
  r.end();
  return tx;
}
