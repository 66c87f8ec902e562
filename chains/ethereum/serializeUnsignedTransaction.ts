import { encodeRlp, uintToBytes } from './rlp.js';
import { TYPE_BYTE, unsignedItems } from './envelope.js';
import type { EthTransaction } from './types.js';

const EMPTY = new Uint8Array(0);

/** The unsigned serialization (the bytes whose keccak is signed); byte-identical to viem's `serializeTransaction(tx)`. */
export function serializeUnsignedTransaction(tx: EthTransaction): Uint8Array {
  const items = unsignedItems(tx);
  if (tx.type === 'legacy') {
    // EIP-155: the chain id and two empty values stand in for v, r, s.
    if (tx.chainId !== undefined) items.push(uintToBytes(tx.chainId), EMPTY, EMPTY);
    return encodeRlp(items);
  }
  return encodeRlp(items, TYPE_BYTE[tx.type]);
}
