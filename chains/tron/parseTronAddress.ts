import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { invalid } from '../../src/shared/errors.js';
import { base58check } from './base58.js';
import { TRON_ADDRESS_LENGTH, TRON_ADDRESS_PREFIX } from './types.js';

const HEX_RE = /^41[0-9a-fA-F]{40}$/;
const BASE58_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
// Decoded base58check addresses (checksum checked), by their text: a request names the same few
// addresses several times, and each decoding costs a base58 conversion and two SHA-256. Only
// addresses that decoded are kept; callers get a copy. Public data only.
const MEMO = new BoundedMemo<string, Uint8Array>(1024);

/**
 * Parses a Tron address given as base58check (`T…`, 34 characters, checksum checked) or as 42 hex
 * digits starting with `41`; returns the 21 bytes 0x41 ‖ account id.
 */
export function parseTronAddress(value: string, field: string): Uint8Array {
  if (HEX_RE.test(value)) return new Uint8Array(Buffer.from(value, 'hex'));
  // A copy each time: the remembered bytes are never handed out.
  return MEMO.through(value, () => decodeBase58Address(value, field)).slice();
}

function decodeBase58Address(value: string, field: string): Uint8Array {
  if (!BASE58_RE.test(value)) {
    throw invalid(field, 'must be a base58check Tron address (T…) or 21-byte hex starting with 41');
  }
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(value);
  } catch {
    throw invalid(field, 'has a wrong base58check checksum');
  }
  if (bytes.length !== TRON_ADDRESS_LENGTH || bytes[0] !== TRON_ADDRESS_PREFIX) {
    throw invalid(field, 'does not decode to 21 bytes starting with 0x41');
  }
  return bytes;
}
