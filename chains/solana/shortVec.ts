/**
 * Solana's compact-u16 ("short_vec") length prefix: 7 bits per byte, little-endian, high bit =
 * more, at most 3 bytes. Decoding is strict like the runtime's: no alias encodings (a trailing
 * zero byte) and nothing above 0xffff.
 */
import { malformed } from './malformed.js';

/** Encodes a length 0..0xffff. */
export function encodeShortVec(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff) {
    throw new RangeError(`compact-u16 value out of range: ${value}`);
  }
  const out: number[] = [];
  let rest = value;
  for (;;) {
    const low = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      out.push(low);
      return Uint8Array.from(out);
    }
    out.push(low | 0x80);
  }
}

/** Decodes a compact-u16 at `offset`; returns the value and the offset after it. */
export function decodeShortVec(bytes: Uint8Array, offset: number, field: string): [number, number] {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const byte = bytes[offset + i];
    if (byte === undefined) throw malformed(field, `compact-u16 truncated at offset ${offset + i}`);
    if (i === 2 && byte > 0x03) throw malformed(field, `compact-u16 at offset ${offset} exceeds 0xffff`);
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) {
      if (i > 0 && byte === 0)
        throw malformed(field, `compact-u16 at offset ${offset} is not minimally encoded`);
      return [value, offset + i + 1];
    }
  }
  // Unreachable: the third byte is ≤ 0x03 and so has no continuation bit.
  throw malformed(field, `compact-u16 at offset ${offset} is longer than 3 bytes`);
}
