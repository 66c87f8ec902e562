/**
 * Decoding of BIP-174 (version 0) maps from their raw pairs. Known key types are checked strictly
 * (key length, value layout); unknown and proprietary pairs are kept verbatim in `entries`. Used by
 * the parser and again when a signature is added, so the decoded view never drifts from the bytes.
 */
import { bytesToHex, equalBytes } from '../../src/shared/encoding.js';
import { isValidPublicKey } from '../../src/shared/secp256k1.js';
import { ByteReader, malformed } from './bytes.js';
import { decodeDer } from './der.js';
import { parseTransaction } from './parseTransaction.js';
import { txidInternal } from './txid.js';
import { MAX_MONEY } from './types.js';
import type {
  Bip32Derivation,
  BitcoinTransaction,
  PartialSig,
  PsbtEntry,
  PsbtInput,
  PsbtOutput,
  TapBip32Derivation,
  TxOutput,
} from './types.js';

export const IN = {
  NON_WITNESS_UTXO: 0x00,
  WITNESS_UTXO: 0x01,
  PARTIAL_SIG: 0x02,
  SIGHASH_TYPE: 0x03,
  REDEEM_SCRIPT: 0x04,
  WITNESS_SCRIPT: 0x05,
  BIP32_DERIVATION: 0x06,
  FINAL_SCRIPTSIG: 0x07,
  FINAL_SCRIPTWITNESS: 0x08,
  RIPEMD160: 0x0a,
  SHA256: 0x0b,
  HASH160: 0x0c,
  HASH256: 0x0d,
  TAP_KEY_SIG: 0x13,
  TAP_SCRIPT_SIG: 0x14,
  TAP_LEAF_SCRIPT: 0x15,
  TAP_BIP32_DERIVATION: 0x16,
  TAP_INTERNAL_KEY: 0x17,
  TAP_MERKLE_ROOT: 0x18,
} as const;

/** BIP-341: a control block is 33 + 32m bytes, m ≤ 128 (the depth of the script tree). */
const TAPROOT_CONTROL_MAX_DEPTH = 128;

/** BIP-370 (PSBTv2) input fields that must not appear in a version 0 PSBT. */
const IN_V2_ONLY = new Set([0x0e, 0x0f, 0x10, 0x11, 0x12]);
/** BIP-370 output fields (amount, script). */
const OUT_V2_ONLY = new Set([0x03, 0x04]);
/** BIP-370 global fields. */
export const GLOBAL_V2_ONLY = new Set([0x02, 0x03, 0x04, 0x05, 0x06]);

/** Rejects a repeated key within one map (BIP-174: keys must be unique). */
export function assertUniqueKeys(entries: readonly PsbtEntry[], field: string): void {
  const seen = new Set<string>();
  for (const e of entries) {
    const k = bytesToHex(e.key);
    if (seen.has(k)) throw malformed(field, `duplicate key 0x${k}`);
    seen.add(k);
  }
}

function keyOnly(e: PsbtEntry, field: string): void {
  if (e.key.length !== 1)
    throw malformed(field, `key must be the type byte alone, got ${e.key.length} bytes`);
}

function secPubkey(bytes: Uint8Array, field: string): Uint8Array {
  if ((bytes.length !== 33 && bytes.length !== 65) || !isValidPublicKey(bytes)) {
    throw malformed(field, 'key data is not a valid 33- or 65-byte secp256k1 public key');
  }
  return bytes;
}

function readOrigin(r: ByteReader, field: string): { fingerprint: Uint8Array; path: number[] } {
  if (r.remaining < 4 || r.remaining % 4 !== 0) {
    throw malformed(field, 'key origin must be a 4-byte fingerprint followed by 4-byte path elements');
  }
  const fingerprint = r.bytes(4, 'fingerprint');
  const path: number[] = [];
  while (r.remaining > 0) path.push(r.u32('path element'));
  return { fingerprint, path };
}

function bip32Derivation(e: PsbtEntry, field: string): Bip32Derivation {
  const pubkey = secPubkey(e.key.slice(1), field);
  const r = new ByteReader(e.value, field);
  return { pubkey, ...readOrigin(r, field) };
}

function tapBip32Derivation(e: PsbtEntry, field: string): TapBip32Derivation {
  if (e.key.length !== 33) throw malformed(field, 'key data must be a 32-byte x-only public key');
  const r = new ByteReader(e.value, field);
  const n = r.count('leaf hash count', 32);
  const leafHashes: Uint8Array[] = [];
  for (let i = 0; i < n; i++) leafHashes.push(r.bytes(32, 'leaf hash'));
  return { xOnlyPubkey: e.key.slice(1), leafHashes, ...readOrigin(r, field) };
}

/** BIP-341: 64 bytes for SIGHASH_DEFAULT, else 65 with a non-zero sighash type byte. */
function schnorrSignature(value: Uint8Array, field: string): Uint8Array {
  if (!(value.length === 64 || (value.length === 65 && value[64] !== 0))) {
    throw malformed(field, 'must be a 64-byte signature or 65 bytes ending in a non-zero sighash type');
  }
  return value;
}

/** The hash-preimage input fields: the field's name and the length of the hash its key carries. */
const PREIMAGES: Readonly<Record<number, readonly [string, number]>> = {
  [IN.RIPEMD160]: ['ripemd160', 20],
  [IN.SHA256]: ['sha256', 32],
  [IN.HASH160]: ['hash160', 20],
  [IN.HASH256]: ['hash256', 32],
};

/** A hash preimage pair (BIP-174): the key carries the hash, so it is 1 + the hash's length. */
function preimage(e: PsbtEntry, field: string, hashLength: number): void {
  if (e.key.length !== 1 + hashLength) throw malformed(field, `key data must be the ${hashLength}-byte hash`);
}

/** PSBT_IN_TAP_LEAF_SCRIPT (BIP-371): key {control block}, value {script}{leaf version}. */
function tapLeafScript(e: PsbtEntry, field: string): void {
  const control = e.key.length - 1;
  if (control < 33 || (control - 33) % 32 !== 0 || (control - 33) / 32 > TAPROOT_CONTROL_MAX_DEPTH) {
    throw malformed(field, `control block must be 33 + 32m bytes with m at most 128, got ${control}`);
  }
  const version = e.value[e.value.length - 1];
  if (version === undefined) throw malformed(field, 'value must be a script followed by its leaf version');
  // The control block's first byte is the leaf version with the output key's parity in bit 0.
  if (version !== ((e.key[1] as number) & 0xfe)) {
    throw malformed(field, "leaf version differs from the control block's");
  }
}

/**
 * PSBT_OUT_TAP_TREE (BIP-371): {depth, leaf version, script} for every leaf, depth first, making a
 * complete binary tree of depth at most 128.
 */
function tapTree(value: Uint8Array, field: string): void {
  const r = new ByteReader(value, field);
  if (r.remaining === 0) throw malformed(field, 'must hold at least one leaf');
  // Leaves merge pairwise from the deepest; a complete tree leaves exactly the root.
  const open: number[] = [];
  while (r.remaining > 0) {
    if (open.length === 1 && open[0] === 0) throw malformed(field, 'has leaves past a complete tree');
    const depth = r.u8('depth');
    if (depth > TAPROOT_CONTROL_MAX_DEPTH) throw malformed(field, `leaf depth ${depth} is over 128`);
    const version = r.u8('leaf version');
    if ((version & 1) !== 0) throw malformed(field, `leaf version 0x${version.toString(16)} is odd`);
    r.varBytes('script');
    let d = depth;
    while (open.length > 0 && open[open.length - 1] === d && d > 0) {
      open.pop();
      d -= 1;
    }
    open.push(d);
  }
  if (!(open.length === 1 && open[0] === 0)) throw malformed(field, 'leaves do not make a complete tree');
}

/** PSBT_GLOBAL_XPUB (BIP-174): key {78-byte BIP-32 extended key}, value {key origin}. */
export function checkGlobalXpub(e: PsbtEntry): void {
  if (e.key.length !== 79) throw malformed('global.xpub', 'key data must be a 78-byte extended public key');
  // BIP-32 serialization: version 4, depth 1, parent fingerprint 4, child number 4, chain code 32, key 33.
  secPubkey(e.key.subarray(46), 'global.xpub');
  readOrigin(new ByteReader(e.value, 'global.xpub'), 'global.xpub');
}

function xOnly(e: PsbtEntry, field: string): Uint8Array {
  keyOnly(e, field);
  if (e.value.length !== 32)
    throw malformed(field, `must be a 32-byte x-only key, got ${e.value.length} bytes`);
  return e.value;
}

/** Decodes a witness_utxo value: 8-byte amount and a scriptPubKey, nothing after. */
function txOut(value: Uint8Array, field: string): TxOutput {
  const r = new ByteReader(value, field);
  const amount = r.u64('amount');
  if (amount > MAX_MONEY) throw malformed(field, `amount ${amount} exceeds 21 million BTC`);
  const script = r.varBytes('scriptPubKey');
  r.end();
  return { value: amount, script };
}

function witnessStack(value: Uint8Array, field: string): Uint8Array[] {
  const r = new ByteReader(value, field);
  const n = r.count('item count', 1);
  const items: Uint8Array[] = [];
  for (let i = 0; i < n; i++) items.push(r.varBytes(`item ${i}`));
  r.end();
  return items;
}

interface MutableInput {
  entries: readonly PsbtEntry[];
  nonWitnessUtxo?: BitcoinTransaction;
  witnessUtxo?: TxOutput;
  partialSigs: PartialSig[];
  sighashType?: number;
  redeemScript?: Uint8Array;
  witnessScript?: Uint8Array;
  bip32Derivations: Bip32Derivation[];
  finalScriptSig?: Uint8Array;
  finalScriptWitness?: Uint8Array[];
  tapKeySig?: Uint8Array;
  tapBip32Derivations: TapBip32Derivation[];
  tapInternalKey?: Uint8Array;
}

/**
 * Decodes input map `index` of a PSBT whose unsigned transaction is `tx`. A non_witness_utxo must hash to
 * the prevout's txid and hold the spent output; with a witness_utxo too, both must describe the same output.
 */
export function decodeInput(entries: readonly PsbtEntry[], index: number, tx: BitcoinTransaction): PsbtInput {
  const base = `inputs[${index}]`;
  assertUniqueKeys(entries, base);
  const out: MutableInput = { entries, partialSigs: [], bip32Derivations: [], tapBip32Derivations: [] };
  for (const e of entries) {
    const type = e.key[0] as number;
    switch (type) {
      case IN.NON_WITNESS_UTXO: {
        const f = `${base}.non_witness_utxo`;
        keyOnly(e, f);
        out.nonWitnessUtxo = parseTransaction(e.value, { field: f, allowWitness: true });
        break;
      }
      case IN.WITNESS_UTXO: {
        const f = `${base}.witness_utxo`;
        keyOnly(e, f);
        out.witnessUtxo = txOut(e.value, f);
        break;
      }
      case IN.PARTIAL_SIG: {
        const f = `${base}.partial_sig`;
        const pubkey = secPubkey(e.key.slice(1), f);
        if (e.value.length < 2 || decodeDer(e.value.subarray(0, e.value.length - 1)) === undefined) {
          throw malformed(f, 'value must be a strict DER signature (BIP-66) followed by a sighash type byte');
        }
        out.partialSigs.push({ pubkey, signature: e.value });
        break;
      }
      case IN.SIGHASH_TYPE: {
        const f = `${base}.sighash_type`;
        keyOnly(e, f);
        const r = new ByteReader(e.value, f);
        out.sighashType = r.u32('sighash type');
        r.end();
        break;
      }
      case IN.REDEEM_SCRIPT:
        keyOnly(e, `${base}.redeem_script`);
        out.redeemScript = e.value;
        break;
      case IN.WITNESS_SCRIPT:
        keyOnly(e, `${base}.witness_script`);
        out.witnessScript = e.value;
        break;
      case IN.BIP32_DERIVATION:
        out.bip32Derivations.push(bip32Derivation(e, `${base}.bip32_derivation`));
        break;
      case IN.FINAL_SCRIPTSIG:
        keyOnly(e, `${base}.final_scriptsig`);
        out.finalScriptSig = e.value;
        break;
      case IN.FINAL_SCRIPTWITNESS:
        keyOnly(e, `${base}.final_scriptwitness`);
        out.finalScriptWitness = witnessStack(e.value, `${base}.final_scriptwitness`);
        break;
      case IN.TAP_KEY_SIG: {
        const f = `${base}.tap_key_sig`;
        keyOnly(e, f);
        out.tapKeySig = schnorrSignature(e.value, f);
        break;
      }
      case IN.TAP_SCRIPT_SIG: {
        // Key data: the x-only key and the leaf hash it signs for.
        const f = `${base}.tap_script_sig`;
        if (e.key.length !== 65)
          throw malformed(f, 'key data must be a 32-byte x-only key and a 32-byte leaf hash');
        schnorrSignature(e.value, f);
        break;
      }
      case IN.TAP_LEAF_SCRIPT:
        tapLeafScript(e, `${base}.tap_leaf_script`);
        break;
      case IN.TAP_MERKLE_ROOT:
        keyOnly(e, `${base}.tap_merkle_root`);
        if (e.value.length !== 32) throw malformed(`${base}.tap_merkle_root`, 'must be 32 bytes');
        break;
      case IN.RIPEMD160:
      case IN.SHA256:
      case IN.HASH160:
      case IN.HASH256: {
        const [name, hashLength] = PREIMAGES[type] as [string, number];
        preimage(e, `${base}.${name}`, hashLength);
        break;
      }
      case IN.TAP_BIP32_DERIVATION:
        out.tapBip32Derivations.push(tapBip32Derivation(e, `${base}.tap_bip32_derivation`));
        break;
      case IN.TAP_INTERNAL_KEY:
        out.tapInternalKey = xOnly(e, `${base}.tap_internal_key`);
        break;
      default:
        if (IN_V2_ONLY.has(type))
          throw malformed(base, `key type 0x${type.toString(16)} is PSBTv2-only (BIP-370)`);
      // Unknown and proprietary (0xfc) types stay verbatim, as do the checked known ones not decoded.
    }
  }
  const input = tx.inputs[index];
  if (input === undefined) throw malformed(base, 'has no matching input in the unsigned transaction');
  if (out.nonWitnessUtxo !== undefined) {
    const f = `${base}.non_witness_utxo`;
    if (!equalBytes(txidInternal(out.nonWitnessUtxo), input.prevTxid)) {
      throw malformed(f, "txid does not match the input's previous txid");
    }
    const spent = out.nonWitnessUtxo.outputs[input.vout];
    if (spent === undefined) throw malformed(f, `has no output ${input.vout}`);
    if (out.witnessUtxo !== undefined) {
      if (out.witnessUtxo.value !== spent.value || !equalBytes(out.witnessUtxo.script, spent.script)) {
        throw malformed(`${base}.witness_utxo`, 'disagrees with the output in non_witness_utxo');
      }
    }
  }
  return out;
}

export function decodeOutput(entries: readonly PsbtEntry[], index: number): PsbtOutput {
  const base = `outputs[${index}]`;
  assertUniqueKeys(entries, base);
  const out: {
    entries: readonly PsbtEntry[];
    redeemScript?: Uint8Array;
    witnessScript?: Uint8Array;
    bip32Derivations: Bip32Derivation[];
    tapInternalKey?: Uint8Array;
    tapBip32Derivations: TapBip32Derivation[];
  } = { entries, bip32Derivations: [], tapBip32Derivations: [] };
  for (const e of entries) {
    const type = e.key[0] as number;
    switch (type) {
      case 0x00:
        keyOnly(e, `${base}.redeem_script`);
        out.redeemScript = e.value;
        break;
      case 0x01:
        keyOnly(e, `${base}.witness_script`);
        out.witnessScript = e.value;
        break;
      case 0x02:
        out.bip32Derivations.push(bip32Derivation(e, `${base}.bip32_derivation`));
        break;
      case 0x05:
        out.tapInternalKey = xOnly(e, `${base}.tap_internal_key`);
        break;
      case 0x06:
        keyOnly(e, `${base}.tap_tree`);
        tapTree(e.value, `${base}.tap_tree`);
        break;
      case 0x07:
        out.tapBip32Derivations.push(tapBip32Derivation(e, `${base}.tap_bip32_derivation`));
        break;
      default:
        if (OUT_V2_ONLY.has(type))
          throw malformed(base, `key type 0x${type.toString(16)} is PSBTv2-only (BIP-370)`);
    }
  }
  return out;
}
