import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { bytesToHex } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import { base58check } from './base58.js';
import { TRON_ADDRESS_LENGTH, TRON_ADDRESS_PREFIX } from './types.js';

// By the address's hex: a request names the same few addresses several times (owner, recipient,
// signer), and each encoding costs a base58 conversion and two SHA-256. Public data only.
const MEMO = new BoundedMemo<string, string>(1024);

/** The base58check `T…` form of a 21-byte Tron address (0x41 ‖ account id). */
export function encodeTronAddress(address: Uint8Array): string {
  if (address.length !== TRON_ADDRESS_LENGTH || address[0] !== TRON_ADDRESS_PREFIX) {
    throw invalid('address', 'must be 21 bytes starting with 0x41');
  }
  return MEMO.through(bytesToHex(address), () => base58check.encode(address));
}
