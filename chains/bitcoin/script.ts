/** Output script templates (BIP-13/16/141/341) and the few script pushes the finalizer needs. */
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '../../src/shared/sha256.js';
import { concatBytes, equalBytes } from '../../src/shared/encoding.js';

export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}

/** OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG */
export function p2pkhScript(pubkeyHash: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(0x76, 0xa9, 0x14), pubkeyHash, Uint8Array.of(0x88, 0xac));
}

/** OP_0 <20> (BIP-141 P2WPKH). */
export function p2wpkhScript(pubkeyHash: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(0x00, 0x14), pubkeyHash);
}

/** OP_1 <32> (BIP-341 P2TR). */
export function p2trScript(outputKey: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(0x51, 0x20), outputKey);
}

export const SCRIPT_TYPES = [
  'P2PKH',
  'P2SH',
  'P2WPKH',
  'P2WSH',
  'P2TR',
  'WITNESS_UNKNOWN',
  'OP_RETURN',
  'NONSTANDARD',
] as const;
export type ScriptType = (typeof SCRIPT_TYPES)[number];

export interface ClassifiedScript {
  readonly type: ScriptType;
  /** Hash, witness program or output key; empty for OP_RETURN and non-standard scripts. */
  readonly program: Uint8Array;
  /** Witness version for segwit outputs, -1 otherwise. */
  readonly witnessVersion: number;
}

/** Recognizes the standard output templates by their exact byte layout. */
export function classifyScript(s: Uint8Array): ClassifiedScript {
  const n = s.length;
  if (n === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) {
    return { type: 'P2PKH', program: s.slice(3, 23), witnessVersion: -1 };
  }
  if (n === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) {
    return { type: 'P2SH', program: s.slice(2, 22), witnessVersion: -1 };
  }
  // BIP-141: a 1-byte push opcode (OP_0, OP_1..OP_16) followed by one direct push of 2..40 bytes.
  const op = s[0];
  const len = s[1];
  if (
    op !== undefined &&
    len !== undefined &&
    n >= 4 &&
    n <= 42 &&
    len === n - 2 &&
    (op === 0 || (op >= 0x51 && op <= 0x60))
  ) {
    const version = op === 0 ? 0 : op - 0x50;
    const program = s.slice(2);
    if (version === 0 && len === 20) return { type: 'P2WPKH', program, witnessVersion: 0 };
    if (version === 0 && len === 32) return { type: 'P2WSH', program, witnessVersion: 0 };
    if (version === 1 && len === 32) return { type: 'P2TR', program, witnessVersion: 1 };
    if (version !== 0) return { type: 'WITNESS_UNKNOWN', program, witnessVersion: version };
  }
  if (n >= 1 && s[0] === 0x6a) return { type: 'OP_RETURN', program: new Uint8Array(0), witnessVersion: -1 };
  return { type: 'NONSTANDARD', program: new Uint8Array(0), witnessVersion: -1 };
}

/** Minimal push of `data` (BIP-62 rule 3) for the ≤ 75-byte items a P2PKH scriptSig holds. */
export function pushData(data: Uint8Array): Uint8Array {
  if (data.length > 75) throw new RangeError('pushData only handles direct pushes up to 75 bytes');
  return concatBytes(Uint8Array.of(data.length), data);
}

export function sameScript(a: Uint8Array, b: Uint8Array): boolean {
  return equalBytes(a, b);
}
