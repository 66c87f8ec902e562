import { invalid } from '../../src/shared/errors.js';
import { encodeRlp, uintToBytes } from './rlp.js';
import { TYPE_BYTE, unsignedItems } from './envelope.js';
import type { EthTransaction } from './types.js';

/** A secp256k1 signature over the signing digest: r and s big-endian (up to 32 bytes), yParity 0/1. */
export interface EthSignature {
  readonly r: Uint8Array;
  readonly s: Uint8Array;
  readonly yParity: number;
}

/**
 * The signed serialization: legacy gets v = chainId * 2 + 35 + yParity (EIP-155) or 27 + yParity;
 * typed envelopes get yParity, r, s appended. r and s are written as minimal RLP integers.
 */
export function assembleSignedTransaction(tx: EthTransaction, sig: EthSignature): Uint8Array {
  if (sig.yParity !== 0 && sig.yParity !== 1) throw invalid('signature.v', 'y-parity must be 0 or 1');
  const items = unsignedItems(tx);
  const r = minimal(sig.r, 'signature.r');
  const s = minimal(sig.s, 'signature.s');
  if (tx.type === 'legacy') {
    const parity = BigInt(sig.yParity);
    const v = tx.chainId === undefined ? 27n + parity : tx.chainId * 2n + 35n + parity;
    items.push(uintToBytes(v), r, s);
    return encodeRlp(items);
  }
  items.push(uintToBytes(BigInt(sig.yParity)), r, s);
  return encodeRlp(items, TYPE_BYTE[tx.type]);
}

/** Strips leading zero bytes so the value is a canonical RLP integer. */
function minimal(value: Uint8Array, field: string): Uint8Array {
  if (value.length > 32) throw invalid(field, `must be at most 32 bytes, got ${value.length}`);
  let i = 0;
  while (i < value.length && value[i] === 0) i++;
  return value.subarray(i);
}
