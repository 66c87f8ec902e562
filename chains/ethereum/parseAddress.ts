import { invalid } from '../../src/shared/errors.js';
import { toChecksumAddress } from './toChecksumAddress.js';

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const HAS_LOWER = /[a-f]/;
const HAS_UPPER = /[A-F]/;

/**
 * Parses a `0x`-prefixed 20-byte hex address. All-lower and all-upper hex are taken as is; mixed
 * case is an EIP-55 checksum and must be right (a typo in a checksummed address is caught here).
 */
export function parseAddress(value: string, field: string): Uint8Array {
  if (!ADDRESS_RE.test(value)) throw invalid(field, 'must be a 0x-prefixed 20-byte hex address');
  const bytes = new Uint8Array(Buffer.from(value.slice(2), 'hex'));
  const digits = value.slice(2);
  if (HAS_LOWER.test(digits) && HAS_UPPER.test(digits) && toChecksumAddress(bytes) !== value) {
    throw invalid(field, 'mixed-case address has a wrong EIP-55 checksum');
  }
  return bytes;
}
