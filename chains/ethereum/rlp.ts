/**
 * Strict RLP (Ethereum Yellow Paper, appendix B). The decoder accepts only the canonical encoding:
 * a byte < 0x80 must stand alone, lengths must be minimal and without leading zeros, and every
 * declared length must match the bytes present. It returns views into the input (no copies).
 */
import { CountersignError } from '../../src/shared/errors.js';

/** A decoded RLP item: a byte string or a list of items. */
export type RlpItem = Uint8Array | readonly RlpItem[];

/** A tx never nests deeper than 4 (tx → access list → entry → keys); 16 leaves room, stops stack abuse. */
const MAX_DEPTH = 16;

/** Builds the error every Ethereum byte parser throws (the message prefix is a stable contract). */
export function malformed(field: string, reason: string): CountersignError {
  return new CountersignError(
    'ETHEREUM_MALFORMED_TRANSACTION',
    `failed to pre-parse Ethereum transaction: ${field}: ${reason}`,
    { meta: { transactionField: field } },
  );
}

/** Decodes exactly one RLP item spanning all of `bytes`; rejects trailing bytes. */
export function decodeRlp(bytes: Uint8Array): RlpItem {
  if (bytes.length === 0) throw malformed('rlp', 'input is empty');
  const [item, end] = decodeAt(bytes, 0, bytes.length, 0);
  if (end !== bytes.length)
    throw malformed('rlp', `${bytes.length - end} trailing byte(s) after offset ${end}`);
  return item;
}

function decodeAt(buf: Uint8Array, pos: number, limit: number, depth: number): [RlpItem, number] {
  const prefix = buf[pos];
  if (prefix === undefined || pos >= limit) throw malformed('rlp', `truncated at offset ${pos}`);
  if (prefix < 0x80) return [buf.subarray(pos, pos + 1), pos + 1];
  if (prefix <= 0xb7) {
    const len = prefix - 0x80;
    const start = pos + 1;
    if (start + len > limit) throw malformed('rlp', `string at offset ${pos} is truncated`);
    if (len === 1 && (buf[start] as number) < 0x80) {
      throw malformed('rlp', `single byte below 0x80 at offset ${pos} is wrapped as a string`);
    }
    return [buf.subarray(start, start + len), start + len];
  }
  if (prefix <= 0xbf) {
    const [len, start] = longLength(buf, pos, prefix - 0xb7, limit);
    if (start + len > limit) throw malformed('rlp', `string at offset ${pos} is truncated`);
    return [buf.subarray(start, start + len), start + len];
  }
  if (depth >= MAX_DEPTH) throw malformed('rlp', `lists nested deeper than ${MAX_DEPTH}`);
  let len: number;
  let start: number;
  if (prefix <= 0xf7) {
    len = prefix - 0xc0;
    start = pos + 1;
  } else {
    [len, start] = longLength(buf, pos, prefix - 0xf7, limit);
  }
  const end = start + len;
  if (end > limit) throw malformed('rlp', `list at offset ${pos} is truncated`);
  const items: RlpItem[] = [];
  let p = start;
  while (p < end) {
    const [item, next] = decodeAt(buf, p, end, depth + 1);
    items.push(item);
    p = next;
  }
  return [items, end];
}

/** Reads a long-form length (1–8 bytes); it must have no leading zero and be ≥ 56. */
function longLength(buf: Uint8Array, pos: number, lenOfLen: number, limit: number): [number, number] {
  const start = pos + 1;
  if (start + lenOfLen > limit) throw malformed('rlp', `length at offset ${pos} is truncated`);
  if (buf[start] === 0) throw malformed('rlp', `length at offset ${pos} has a leading zero byte`);
  let len = 0;
  for (let i = 0; i < lenOfLen; i++) len = len * 256 + (buf[start + i] as number);
  if (len < 56) throw malformed('rlp', `length ${len} at offset ${pos} should use the short form`);
  // Precision is lost only beyond 2^53, far past any input, which the truncation check then rejects.
  return [len, start + lenOfLen];
}

/** An item to encode: bytes, or a list of items. */
export type RlpInput = Uint8Array | readonly RlpInput[];

/**
 * Canonical RLP encoding; sizes are computed first so the output is one allocation. `typePrefix`
 * prepends an EIP-2718 type byte in the same buffer.
 */
export function encodeRlp(input: RlpInput, typePrefix?: number): Uint8Array {
  const offset = typePrefix === undefined ? 0 : 1;
  const out = new Uint8Array(offset + encodedLength(input));
  if (typePrefix !== undefined) out[0] = typePrefix;
  const end = write(input, out, offset);
  if (end !== out.length) throw new CountersignError('INTERNAL', 'RLP encoder size mismatch');
  return out;
}

function payloadLength(input: RlpInput): number {
  if (input instanceof Uint8Array) return input.length;
  let n = 0;
  for (const item of input) n += encodedLength(item);
  return n;
}

function encodedLength(input: RlpInput): number {
  if (input instanceof Uint8Array) {
    if (input.length === 1 && (input[0] as number) < 0x80) return 1;
    return headerLength(input.length) + input.length;
  }
  const n = payloadLength(input);
  return headerLength(n) + n;
}

function headerLength(len: number): number {
  return len < 56 ? 1 : 1 + byteLength(len);
}

function byteLength(n: number): number {
  let k = 0;
  while (n > 0) {
    k++;
    n = Math.floor(n / 256);
  }
  return k;
}

function writeHeader(out: Uint8Array, pos: number, len: number, short: number, long: number): number {
  if (len < 56) {
    out[pos] = short + len;
    return pos + 1;
  }
  const k = byteLength(len);
  out[pos] = long + k;
  for (let i = k; i >= 1; i--) {
    out[pos + i] = len % 256;
    len = Math.floor(len / 256);
  }
  return pos + 1 + k;
}

function write(input: RlpInput, out: Uint8Array, pos: number): number {
  if (input instanceof Uint8Array) {
    if (input.length === 1 && (input[0] as number) < 0x80) {
      out[pos] = input[0] as number;
      return pos + 1;
    }
    const p = writeHeader(out, pos, input.length, 0x80, 0xb7);
    out.set(input, p);
    return p + input.length;
  }
  let p = writeHeader(out, pos, payloadLength(input), 0xc0, 0xf7);
  for (const item of input) p = write(item, out, p);
  return p;
}

/** Minimal big-endian bytes of a non-negative integer (0n → empty), the RLP integer form. */
export function uintToBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError('negative integer');
  if (value === 0n) return new Uint8Array(0);
  if (value <= 0xffffffffffffn) {
    let n = Number(value);
    const out = new Uint8Array(byteLength(n));
    for (let i = out.length - 1; i >= 0; i--) {
      out[i] = n % 256;
      n = Math.floor(n / 256);
    }
    return out;
  }
  let h = value.toString(16);
  if (h.length % 2) h = `0${h}`;
  return new Uint8Array(Buffer.from(h, 'hex'));
}

/** Reads a canonical RLP integer of at most `maxBytes` bytes, naming `field` when it is not one. */
export function decodeUint(item: RlpItem | undefined, field: string, maxBytes = 32): bigint {
  if (!(item instanceof Uint8Array)) throw malformed(field, 'expected an integer, got a list');
  if (item.length === 0) return 0n;
  if (item[0] === 0) throw malformed(field, 'integer has a leading zero byte');
  if (item.length > maxBytes) throw malformed(field, `integer is wider than ${maxBytes * 8} bits`);
  if (item.length <= 6) {
    let n = 0;
    for (const b of item) n = n * 256 + b;
    return BigInt(n);
  }
  return BigInt(`0x${Buffer.from(item.buffer, item.byteOffset, item.length).toString('hex')}`);
}
