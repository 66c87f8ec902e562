import { hexToBytes, concatBytes } from '../../src/shared/encoding.js';
import { addressFromPublicKey } from '../ethereum/index.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import { TRON_ADDRESS_PREFIX } from './types.js';

/**
 * The Tron address of a 33- or 65-byte secp256k1 public key: base58check(0x41 ‖ keccak256(x ‖ y)[12..32]),
 * the Ethereum account id with Tron's version byte.
 */
export function tronAddressFromPublicKey(pub: Uint8Array): string {
  const accountId = hexToBytes(addressFromPublicKey(pub), 'public_key');
  return encodeTronAddress(concatBytes(Uint8Array.of(TRON_ADDRESS_PREFIX), accountId));
}
