import { keccak_256 } from '../../src/shared/keccak.js';

/** The digest an Ethereum transaction signature commits to: keccak256 of the unsigned serialization. */
export function signingDigest(unsigned: Uint8Array): Uint8Array {
  return keccak_256(unsigned);
}
