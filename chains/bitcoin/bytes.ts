/**
 * Strict little-endian readers and writers for Bitcoin's wire formats. Every read is bounds-checked,
 * CompactSize integers must be minimal (Bitcoin Core's "non-canonical ReadCompactSize()"), and every
 * failure is a {@link CountersignError} naming the PSBT/transaction field that was being read.
 */
import { CountersignError } from '../../src/shared/errors.js';

/**
 * The error of every Bitcoin byte parser (BITCOIN_MALFORMED_PSBT, also for a transaction inside one);
 * the message prefix mirrors Turnkey's "failed to pre-parse".
 */
export function malformed(field: string, reason: string): CountersignError {
  return new CountersignError(
    'BITCOIN_MALFORMED_PSBT',
    `failed to pre-parse Bitcoin transaction: ${field}: ${reason}`,
    {
      field,
      meta: { transactionField: field },
    },
  );
}

/** A cursor over untrusted bytes; `field` names what is being parsed for error messages. */
export class ByteReader {
  private pos = 0;

  constructor(
    private readonly buf: Uint8Array,
    /** What is being read; the PSBT parser renames it per map. */
    public field: string,
  ) {}

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  private need(n: number, what: string): void {
    if (n > this.buf.length - this.pos) {
      throw malformed(this.field, `${what} is truncated at offset ${this.pos}`);
    }
  }

  u8(what: string): number {
    this.need(1, what);
    return this.buf[this.pos++] as number;
  }

  peek(): number | undefined {
    return this.buf[this.pos];
  }

  u32(what: string): number {
    this.need(4, what);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return (
      ((b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16)) +
      (b[p + 3] as number) * 0x1000000
    );
  }

  i32(what: string): number {
    return this.u32(what) | 0;
  }

  u64(what: string): bigint {
    const lo = this.u32(what);
    const hi = this.u32(what);
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** CompactSize; rejects non-minimal encodings and values that cannot be a length here. */
  compactSize(what: string): number {
    const first = this.u8(what);
    if (first < 0xfd) return first;
    let value: number;
    let min: number;
    if (first === 0xfd) {
      this.need(2, what);
      value = (this.buf[this.pos] as number) | ((this.buf[this.pos + 1] as number) << 8);
      this.pos += 2;
      min = 0xfd;
    } else if (first === 0xfe) {
      value = this.u32(what);
      min = 0x10000;
    } else {
      const big = this.u64(what);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw malformed(this.field, `${what} is too large at offset ${this.pos - 9}`);
      }
      value = Number(big);
      min = 0x100000000;
    }
    if (value < min) throw malformed(this.field, `${what} is not minimally encoded (CompactSize)`);
    return value;
  }

  /** A copy of the next `n` bytes. */
  bytes(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** CompactSize length followed by that many bytes. */
  varBytes(what: string): Uint8Array {
    const n = this.compactSize(`${what} length`);
    return this.bytes(n, what);
  }

  /** Reads a count of items of at least `minItemSize` bytes each, refusing counts the input cannot hold. */
  count(what: string, minItemSize: number): number {
    const n = this.compactSize(what);
    if (n * minItemSize > this.remaining) {
      throw malformed(this.field, `${what} ${n} exceeds what the remaining ${this.remaining} bytes can hold`);
    }
    return n;
  }

  /** Throws unless every byte was consumed. */
  end(): void {
    if (this.pos !== this.buf.length) {
      throw malformed(this.field, `${this.buf.length - this.pos} trailing byte(s) after offset ${this.pos}`);
    }
  }
}

/** Accumulates chunks and concatenates once. */
export class ByteWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  bytes(b: Uint8Array): this {
    this.chunks.push(b);
    this.length += b.length;
    return this;
  }

  u8(v: number): this {
    return this.bytes(Uint8Array.of(v & 0xff));
  }

  // Little-endian by shifts: a DataView would need the array's .buffer, which makes V8 move a small
  // array's bytes off its heap (a malloc apiece).
  u32(v: number): this {
    return this.bytes(Uint8Array.of(v, v >>> 8, v >>> 16, v >>> 24));
  }

  /** Two's complement: the same four bytes as u32 of the value's low 32 bits. */
  i32(v: number): this {
    return this.u32(v | 0);
  }

  u64(v: bigint): this {
    const low = Number(BigInt.asUintN(32, v));
    const high = Number(BigInt.asUintN(32, v >> 32n));
    return this.bytes(
      Uint8Array.of(low, low >>> 8, low >>> 16, low >>> 24, high, high >>> 8, high >>> 16, high >>> 24),
    );
  }

  compactSize(n: number): this {
    if (n < 0xfd) return this.u8(n);
    if (n <= 0xffff) return this.u8(0xfd).bytes(Uint8Array.of(n & 0xff, n >> 8));
    if (n <= 0xffffffff) return this.u8(0xfe).u32(n);
    return this.u8(0xff).u64(BigInt(n));
  }

  varBytes(b: Uint8Array): this {
    return this.compactSize(b.length).bytes(b);
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let off = 0;
    for (const c of this.chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  }
}
