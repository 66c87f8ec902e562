import { keccak_256 } from '@noble/hashes/sha3.js';

/** The digest an Ethereum transaction signature commits to: keccak256 of the unsigned serialization. */
export function signingDigest(unsigned: Uint8Array): Uint8Array {
  return keccak_256(unsigned);
}
