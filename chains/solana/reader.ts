import { malformed } from './malformed.js';
import { decodeShortVec } from './shortVec.js';

/** A bounds-checked cursor over untrusted bytes. */
export class Reader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  u8(field: string): number {
    const b = this.bytes[this.offset];
    if (b === undefined) throw malformed(field, `truncated at offset ${this.offset}`);
    this.offset += 1;
    return b;
  }

  take(n: number, field: string): Uint8Array {
    if (this.offset + n > this.bytes.length) {
      throw malformed(
        field,
        `needs ${n} bytes at offset ${this.offset}, ${this.bytes.length - this.offset} left`,
      );
    }
    const out = this.bytes.slice(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  length(field: string): number {
    const [n, next] = decodeShortVec(this.bytes, this.offset, field);
    // Every counted item takes at least one byte: a count beyond what is left is truncation.
    if (n > this.bytes.length - next) throw malformed(field, `count ${n} exceeds the bytes left`);
    this.offset = next;
    return n;
  }

  u8List(field: string): number[] {
    const n = this.length(field);
    return Array.from(this.take(n, field));
  }
}
