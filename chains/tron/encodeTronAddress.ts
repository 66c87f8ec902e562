import { invalid } from '../../src/shared/errors.js';
import { base58check } from './base58.js';
import { TRON_ADDRESS_LENGTH, TRON_ADDRESS_PREFIX } from './types.js';

/** The base58check `T…` form of a 21-byte Tron address (0x41 ‖ account id). */
export function encodeTronAddress(address: Uint8Array): string {
  if (address.length !== TRON_ADDRESS_LENGTH || address[0] !== TRON_ADDRESS_PREFIX) {
    throw invalid('address', 'must be 21 bytes starting with 0x41');
  }
  return base58check.encode(address);
}
