import { base58 } from '@scure/base';
import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { bytesToHex } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import { PUBLIC_KEY_LENGTH } from './types.js';

// A request names the same few keys several times (fee payer, signer, program ids), and base58
// converts in quadratic time: keys that decoded (canonical, 32 bytes) are remembered by their
// text, and handed out as copies; encodings by the key's hex. Public data only.
const DECODED = new BoundedMemo<string, Uint8Array>(1024);
const ENCODED = new BoundedMemo<string, string>(1024);

/** Decodes a base58 public key (or blockhash) into exactly 32 bytes; names `field` when it is not one. */
export function parsePublicKey(value: string, field: string, what = 'public key'): Uint8Array {
  // A copy each time: the remembered bytes are never handed out.
  return DECODED.through(value, () => decodePublicKey(value, field, what)).slice();
}

function decodePublicKey(value: string, field: string, what: string): Uint8Array {
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
  return ENCODED.through(bytesToHex(bytes), () => base58.encode(bytes));
}
