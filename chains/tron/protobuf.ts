/**
 * A minimal strict protobuf wire codec (https://protobuf.dev/programming-guides/encoding/) for the
 * few Tron messages countersign reads. It accepts only what protobuf-java (java-tron) and
 * google-protobuf (tronweb) write: minimal varints, no groups, every length inside its message,
 * field numbers in non-decreasing order. That matters because java-tron takes the txID over
 * `raw_data.toByteArray()`, i.e. over its own re-serialization: bytes in any other form would hash
 * to a different txID on the node than here. Decoded lengths are views into the input (no copies).
 */
import { CountersignError } from '../../src/shared/errors.js';

/** One field as it sits on the wire. Fixed-width values (wire types 1 and 5) stay as raw bytes. */
export type ProtoField =
  | { readonly field: number; readonly wireType: 0; readonly value: bigint }
  | { readonly field: number; readonly wireType: 1 | 2 | 5; readonly value: Uint8Array };

/** Largest field number protobuf allows (2^29 - 1). */
const MAX_FIELD = 0x1fffffff;
const UINT64_LIMIT = 1n << 64n;
const INT64_SIGN = 1n << 63n;

/**
 * Builds the error every Tron byte parser throws (TRON_MALFORMED_TRANSACTION, or another Tron code
 * for a well-formed transaction countersign refuses); the message prefix is the stable part.
 */
export function malformed(
  field: string,
  reason: string,
  code: 'TRON_MALFORMED_TRANSACTION' | 'TRON_UNSUPPORTED_CONTRACT_TYPE' = 'TRON_MALFORMED_TRANSACTION',
): CountersignError {
  return new CountersignError(code, `failed to pre-parse Tron transaction: ${field}: ${reason}`, {
    meta: { transactionField: field },
  });
}

/** Reads a minimal varint (at most 10 bytes, below 2^64) at `pos`; returns the value and the next offset. */
export function readVarint(buf: Uint8Array, pos: number, limit: number, what: string): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    const p = pos + i;
    if (p >= limit) throw malformed(what, `varint at offset ${pos} is truncated`);
    const b = buf[p] as number;
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      if (i > 0 && b === 0) throw malformed(what, `varint at offset ${pos} is overlong (not minimal)`);
      if (value >= UINT64_LIMIT) throw malformed(what, `varint at offset ${pos} exceeds 64 bits`);
      return [value, p + 1];
    }
    shift += 7n;
  }
  throw malformed(what, `varint at offset ${pos} is longer than 10 bytes`);
}

/**
 * Splits one message into its fields. `what` names the message in errors. Rejects groups (wire
 * types 3/4, deprecated and never used by Tron), field number 0, truncation, and fields out of
 * non-decreasing number order (every serializer Tron uses writes fields in number order).
 */
export function decodeFields(bytes: Uint8Array, what: string): ProtoField[] {
  const out: ProtoField[] = [];
  let pos = 0;
  let last = 0;
  while (pos < bytes.length) {
    const start = pos;
    const [tag, afterTag] = readVarint(bytes, pos, bytes.length, what);
    const wireType = Number(tag & 7n);
    const fieldBig = tag >> 3n;
    if (fieldBig === 0n || fieldBig > BigInt(MAX_FIELD)) {
      throw malformed(what, `field number ${fieldBig} at offset ${start} is out of range`);
    }
    const field = Number(fieldBig);
    if (field < last) {
      throw malformed(
        what,
        `field ${field} at offset ${start} follows field ${last} (fields must be in number order)`,
      );
    }
    last = field;
    pos = afterTag;
    switch (wireType) {
      case 0: {
        const [value, next] = readVarint(bytes, pos, bytes.length, what);
        out.push({ field, wireType, value });
        pos = next;
        break;
      }
      case 2: {
        const [len, next] = readVarint(bytes, pos, bytes.length, what);
        if (len > BigInt(bytes.length - next)) {
          throw malformed(
            what,
            `field ${field} at offset ${start} declares ${len} bytes; only ${bytes.length - next} remain`,
          );
        }
        const end = next + Number(len);
        out.push({ field, wireType, value: bytes.subarray(next, end) });
        pos = end;
        break;
      }
      case 1:
      case 5: {
        const size = wireType === 1 ? 8 : 4;
        if (pos + size > bytes.length)
          throw malformed(what, `field ${field} at offset ${start} is truncated`);
        out.push({ field, wireType, value: bytes.subarray(pos, pos + size) });
        pos += size;
        break;
      }
      default:
        throw malformed(what, `field ${field} at offset ${start} has unsupported wire type ${wireType}`);
    }
  }
  return out;
}

/** Number of bytes of the varint encoding of `value` (0 ≤ value < 2^64). */
export function varintLength(value: bigint): number {
  let n = 1;
  while (value >= 0x80n) {
    value >>= 7n;
    n++;
  }
  return n;
}

function writeVarint(out: Uint8Array, pos: number, value: bigint): number {
  while (value >= 0x80n) {
    out[pos++] = Number(value & 0x7fn) | 0x80;
    value >>= 7n;
  }
  out[pos++] = Number(value);
  return pos;
}

function tagOf(f: ProtoField): bigint {
  return (BigInt(f.field) << 3n) | BigInt(f.wireType);
}

function fieldLength(f: ProtoField): number {
  const tag = varintLength(tagOf(f));
  if (f.wireType === 0) return tag + varintLength(f.value);
  if (f.wireType === 2) return tag + varintLength(BigInt(f.value.length)) + f.value.length;
  return tag + f.value.length;
}

/** Encodes fields in the order given, in one allocation. The inverse of `decodeFields`. */
export function encodeFields(fields: readonly ProtoField[]): Uint8Array {
  let size = 0;
  for (const f of fields) {
    if (f.wireType === 0 && (f.value < 0n || f.value >= UINT64_LIMIT)) {
      throw new RangeError(`field ${f.field}: varint out of range`);
    }
    if ((f.wireType === 1 && f.value.length !== 8) || (f.wireType === 5 && f.value.length !== 4)) {
      throw new RangeError(`field ${f.field}: fixed-width value has the wrong size`);
    }
    size += fieldLength(f);
  }
  const out = new Uint8Array(size);
  let pos = 0;
  for (const f of fields) {
    pos = writeVarint(out, pos, tagOf(f));
    if (f.wireType === 0) {
      pos = writeVarint(out, pos, f.value);
    } else {
      if (f.wireType === 2) pos = writeVarint(out, pos, BigInt(f.value.length));
      out.set(f.value, pos);
      pos += f.value.length;
    }
  }
  if (pos !== size) throw new CountersignError('INTERNAL', 'protobuf encoder size mismatch');
  return out;
}

/**
 * A non-negative int64 (Tron's amounts, times and limits). A negative int64 is a 10-byte
 * sign-extended varint; no valid Tron transaction carries one in the fields we decode.
 */
export function nonNegativeInt64(value: bigint, what: string): bigint {
  if (value >= INT64_SIGN) throw malformed(what, 'must not be negative');
  return value;
}

/** A non-negative int32 or enum value. */
export function nonNegativeInt32(value: bigint, what: string): number {
  if (value > 0x7fffffffn) throw malformed(what, 'is not a non-negative 32-bit integer');
  return Number(value);
}
