/** Strict byte/string codecs shared by chains/ and src/. Each names the field it was parsing. */
import { invalid } from './errors.js';

const HEX_RE = /^[0-9a-fA-F]*$/;

/** Parses hex with an optional `0x`; rejects odd length and non-hex characters. */
export function hexToBytes(value: string, field: string): Uint8Array {
  const h = value.startsWith('0x') || value.startsWith('0X') ? value.slice(2) : value;
  if (h.length % 2 !== 0) throw invalid(field, 'hex string has an odd number of digits');
  if (!HEX_RE.test(h)) throw invalid(field, 'is not a hex string');
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

/** Lower-case hex without `0x`. */
export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Lower-case hex with `0x`. */
export function bytesTo0x(bytes: Uint8Array): `0x${string}` {
  return `0x${bytesToHex(bytes)}`;
}

export function utf8(value: string): Uint8Array {
  return new TextEncoder().encode(value);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let len = 0;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** Big-endian unsigned integer of a byte string (empty → 0n). */
export function bytesToBigint(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  return BigInt(`0x${bytesToHex(bytes)}`);
}

/** Minimal big-endian bytes of a non-negative integer (0n → empty), as RLP wants it. */
export function bigintToBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError('negative integer');
  if (value === 0n) return new Uint8Array(0);
  let h = value.toString(16);
  if (h.length % 2) h = `0${h}`;
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

/** Fixed-width big-endian bytes of a non-negative integer. */
export function bigintToFixed(value: bigint, width: number): Uint8Array {
  const h = value.toString(16).padStart(width * 2, '0');
  if (h.length > width * 2) throw new RangeError(`integer wider than ${width} bytes`);
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;

/** Parses a non-negative decimal string (64-bit and wider values travel as decimal strings). */
export function parseDecimal(value: string, field: string, max?: bigint): bigint {
  if (!DECIMAL_RE.test(value)) throw invalid(field, 'must be a non-negative decimal integer string');
  const n = BigInt(value);
  if (max !== undefined && n > max) throw invalid(field, `must be at most ${max}`);
  return n;
}

export const UINT64_MAX = (1n << 64n) - 1n;
export const UINT256_MAX = (1n << 256n) - 1n;

/** Wipes a buffer that held key material. */
export function zeroize(...buffers: (Uint8Array | undefined)[]): void {
  for (const b of buffers) b?.fill(0);
}
