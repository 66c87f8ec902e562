import { base58 } from '@scure/base';
import { invalid } from '../../src/shared/errors.js';
import { PUBLIC_KEY_LENGTH } from './types.js';

/** Decodes a base58 public key (or blockhash) into exactly 32 bytes; names `field` when it is not one. */
export function parsePublicKey(value: string, field: string, what = 'public key'): Uint8Array {
  if (value === '') throw invalid(field, `is required (a base58 ${what})`, 'FIELD_MISSING');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    throw invalid(field, `is not a base58 string`);
  }
  if (bytes.length !== PUBLIC_KEY_LENGTH) {
    throw invalid(field, `must be a base58 ${what} of 32 bytes, got ${bytes.length}`);
  }
  // base58 has one spelling per byte string; insist on it so equal keys compare equal as strings.
  if (base58.encode(bytes) !== value) throw invalid(field, 'is not in canonical base58');
  return bytes;
}

/** base58 of a 32-byte key. */
export function encodePublicKey(bytes: Uint8Array): string {
  return base58.encode(bytes);
}
