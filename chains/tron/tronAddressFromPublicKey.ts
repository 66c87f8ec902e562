import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { bytesToHex, concatBytes, hexToBytes } from '../../src/shared/encoding.js';
import { addressFromPublicKey } from '../ethereum/index.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import { TRON_ADDRESS_PREFIX } from './types.js';

/**
 * Addresses already derived, by the public key as hex: a signer's key is checked on every request
 * and each derivation costs a point check, a keccak and a base58check (two SHA-256). Public data only.
 */
const MEMO = new BoundedMemo<string, string>(1024);

/** The memo's fill and bound (for tests). */
export const tronAddressMemo: { readonly size: number; readonly limit: number } = MEMO;

/**
 * The Tron address of a 33- or 65-byte secp256k1 public key: base58check(0x41 ‖ keccak256(x ‖ y)[12..32]),
 * the Ethereum account id with Tron's version byte.
 */
export function tronAddressFromPublicKey(pub: Uint8Array): string {
  return MEMO.through(bytesToHex(pub), () => {
    const accountId = hexToBytes(addressFromPublicKey(pub), 'public_key');
    return encodeTronAddress(concatBytes(Uint8Array.of(TRON_ADDRESS_PREFIX), accountId));
  });
}
