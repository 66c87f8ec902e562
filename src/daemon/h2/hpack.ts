/**
 * HPACK (RFC 7541) for the daemon's HTTP/2 server: a full decoder for request header blocks and a
 * stateless encoder for response header blocks.
 *
 * Strings are latin1 throughout: one JS char per octet, both ways, so `name.length + value.length`
 * is the octet count the RFC's size rules use (4.1) and no UTF-8 decoding runs on the hot path.
 */

/** A COMPRESSION_ERROR (RFC 7540 4.3): the header block is malformed and the connection must be closed. */
export class HpackError extends Error {
  override readonly name = 'HpackError';
}

export interface DecodedBlock {
  /** Flat list: name0, value0, name1, value1, ... (names as sent, lowercase expected; strings decoded latin1, one char per byte). Empty when oversize. */
  readonly headers: string[];
  /** True when the header list size (sum of name.length + value.length + 32 per field, RFC 7540 6.5.2) exceeded maxHeaderListSize. Decoding still ran to the end so the dynamic table stays in sync, but no further strings were materialized once over the limit (an HPACK bomb of indexed references to a 4 KiB entry must not allocate megabytes). */
  readonly oversize: boolean;
}

// ---------------------------------------------------------------------------------------------
// Static table (RFC 7541 Appendix A). Index 0 is unused: it is an error to reference it (6.1).

/** Appendix A, indexes 1..61 (exported for tests). */
export const STATIC_TABLE: ReadonlyArray<readonly [name: string, value: string]> = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = 61;
/** STATIC_NAMES[i], STATIC_VALUES[i]: entry i (1-based, as on the wire). */
const STATIC_NAMES: string[] = [''];
const STATIC_VALUES: string[] = [''];
/** Name -> lowest static index with that name, for the encoder's indexed names (6.2.2). */
const STATIC_NAME_INDEX = new Map<string, number>();
for (const [name, value] of STATIC_TABLE) {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, STATIC_NAMES.length);
  STATIC_NAMES.push(name);
  STATIC_VALUES.push(value);
}

// ---------------------------------------------------------------------------------------------
// Huffman code (RFC 7541 Appendix B): the code of symbol i (0..255 octets, 256 = EOS), right
// aligned, and its length in bits. Exported for tests (Kraft equality, canonical form).

// prettier-ignore
export const HUFFMAN_CODES: readonly number[] = [
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, // 0-7
  0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, // 8-15
  0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, // 16-23
  0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, // 24-31
  0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, // 32-39 ' ' ! " # $ % & '
  0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18, // 40-47 ( ) * + , - . /
  0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, // 48-55 0-7
  0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc, // 56-63 8 9 : ; < = > ?
  0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, // 64-71 @ A-G
  0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, // 72-79 H-O
  0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, // 80-87 P-W
  0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22, // 88-95 X Y Z [ \ ] ^ _
  0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, // 96-103 ` a-g
  0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7, // 104-111 h-o
  0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, // 112-119 p-w
  0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd, 0xffffffc, // 120-127 x y z { | } ~ DEL
  0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9, // 128-135
  0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf, // 136-143
  0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3, // 144-151
  0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef, // 152-159
  0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, // 160-167
  0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec, // 168-175
  0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, // 176-183
  0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1, // 184-191
  0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec, // 192-199
  0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed, // 200-207
  0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2, // 208-215
  0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5, // 216-223
  0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3, // 224-231
  0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4, // 232-239
  0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, // 240-247
  0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee, // 248-255
  0x3fffffff, // 256 EOS
];

// prettier-ignore
export const HUFFMAN_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0-15
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16-31
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, // 32-47
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, // 48-63
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // 64-79
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, // 80-95
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, // 96-111
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // 112-127
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128-143
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144-159
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160-175
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176-191
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192-207
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208-223
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224-239
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240-255
  30, // 256 EOS
];

const EOS = 256;

/*
 * Table-driven Huffman decoding, 4 bits at a time. The code tree has 257 leaves and so 256
 * internal nodes; a decoder state is an internal node (0 = root), i.e. the bits read since the
 * last symbol. HUFF_STEP[state * 16 + nibble] packs the result of feeding those 4 bits:
 *   bits 0-7   the next state;
 *   bits 8-15  the symbol completed on the way, when HUFF_EMIT is set (codes are at least 5 bits
 *              long, so 4 bits complete at most one);
 *   HUFF_FAIL  the bits completed EOS, which a string must not contain (5.2).
 * HUFF_ACCEPT[state] says a string may end in that state: at the root, or at most 7 bits down
 * the all-ones path, since padding is "the most significant bits of the code corresponding to
 * the EOS symbol" and "strictly longer than 7 bits ... MUST be treated as a decoding error" (5.2).
 */
const HUFF_EMIT = 1 << 16;
const HUFF_FAIL = 1 << 17;
const HUFF_STEP = new Uint32Array(256 * 16);
const HUFF_ACCEPT = new Uint8Array(256);
{
  // child[2 * node + bit]: > 0 an internal node, < 0 a leaf (~symbol), 0 not yet set (the root,
  // node 0, is nobody's child).
  const child = new Int16Array(512);
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const code = HUFFMAN_CODES[sym]!;
    const len = HUFFMAN_LENGTHS[sym]!;
    let node = 0;
    for (let bit = len - 1; bit >= 0; bit--) {
      const slot = 2 * node + ((code >>> bit) & 1);
      if (bit === 0) {
        if (child[slot] !== 0) throw new Error(`HPACK Huffman table: code of ${sym} is not prefix-free`);
        child[slot] = ~sym;
      } else {
        if (child[slot]! < 0) throw new Error(`HPACK Huffman table: code of ${sym} is not prefix-free`);
        if (child[slot] === 0) child[slot] = nodes++;
        node = child[slot]!;
      }
    }
  }
  if (nodes !== 256 || child.includes(0)) throw new Error('HPACK Huffman table: the code is not complete');

  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let out = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const c = child[2 * node + ((nibble >>> bit) & 1)]!;
        if (c > 0) {
          node = c;
        } else if (~c === EOS) {
          out = HUFF_FAIL;
          break;
        } else {
          out = HUFF_EMIT | (~c << 8);
          node = 0;
        }
      }
      HUFF_STEP[state * 16 + nibble] = out | node;
    }
  }
  // The all-ones path: 7 steps down it are still internal nodes (only EOS is all ones).
  let node = 0;
  HUFF_ACCEPT[0] = 1;
  for (let i = 0; i < 7; i++) {
    node = child[2 * node + 1]!;
    HUFF_ACCEPT[node] = 1;
  }
}

/** Huffman output buffer, shared (decoding is synchronous); grown on demand. */
let scratch = Buffer.allocUnsafeSlow(1024);

/** One string from latin1 octets; a short one is built directly, which beats Buffer#toString's call overhead. */
function latin1(buf: Buffer, start: number, end: number): string {
  if (end - start > 8) return buf.toString('latin1', start, end);
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(buf[i]!);
  return s;
}

/**
 * Decodes the Huffman string src[start, end) (5.2), or with `materialize` false only validates it
 * and returns ''. Throws HpackError on EOS or bad padding.
 */
function huffmanDecode(src: Uint8Array, start: number, end: number, materialize: boolean): string {
  let state = 0;
  if (!materialize) {
    for (let i = start; i < end; i++) {
      const b = src[i]!;
      let e = HUFF_STEP[(state << 4) | (b >>> 4)]!;
      e = HUFF_STEP[((e & 0xff) << 4) | (b & 15)]! | (e & HUFF_FAIL);
      if (e & HUFF_FAIL) throw new HpackError('HPACK: EOS in a Huffman-coded string');
      state = e & 0xff;
    }
    if (HUFF_ACCEPT[state] === 0) throw new HpackError('HPACK: bad Huffman padding');
    return '';
  }
  // Every code is at least 5 bits, so n octets decode to at most 8n/5 symbols.
  const max = ((end - start) * 8) / 5;
  if (scratch.length < max) scratch = Buffer.allocUnsafeSlow(Math.max(Math.ceil(max), 2 * scratch.length));
  const out = scratch;
  let n = 0;
  for (let i = start; i < end; i++) {
    const b = src[i]!;
    let e = HUFF_STEP[(state << 4) | (b >>> 4)]!;
    if (e & HUFF_EMIT) out[n++] = e >>> 8;
    else if (e & HUFF_FAIL) throw new HpackError('HPACK: EOS in a Huffman-coded string');
    e = HUFF_STEP[((e & 0xff) << 4) | (b & 15)]!;
    if (e & HUFF_EMIT) out[n++] = e >>> 8;
    else if (e & HUFF_FAIL) throw new HpackError('HPACK: EOS in a Huffman-coded string');
    state = e & 0xff;
  }
  if (HUFF_ACCEPT[state] === 0) throw new HpackError('HPACK: bad Huffman padding');
  return latin1(out, 0, n);
}

// ---------------------------------------------------------------------------------------------
// Decoder

/** Integers are capped here (5.1 leaves the limit to the implementation). */
const MAX_INT = 0x7fffffff;

/** What readString does with a string: only validate it, decode it, or decode it through the repeat cache. */
const SKIP = 0;
const DECODE = 1;
const CACHED = 2;
type StringMode = typeof SKIP | typeof DECODE | typeof CACHED;

/** The repeat cache (HpackDecoder.cached): slots (a power of two), and the longest string kept, in octets. */
const CACHE_SLOTS = 8;
const CACHE_WIDTH = 128;

export class HpackDecoder {
  /** SETTINGS_HEADER_TABLE_SIZE as advertised: the most a size update may ask for (6.3). */
  private readonly settingsMax: number;
  private readonly maxHeaderListSize: number;
  /** The dynamic table's current maximum size (4.2), as last set by a size update. */
  private limit: number;
  /** Octets in the dynamic table (4.1). */
  private size = 0;
  /**
   * The dynamic table, a ring: entry i (0 = newest, wire index 62 + i) is at slot
   * (head + i) & mask. Capacity is a power of two, grown on demand.
   */
  private names: string[] = new Array<string>(16).fill('');
  private values: string[] = new Array<string>(16).fill('');
  private mask = 15;
  private head = 0;
  private count = 0;
  /** Where the last readInt/readString stopped (saves returning a pair). */
  private pos = 0;
  /** The repeat cache: slot i holds the octets at cacheBytes[i * CACHE_WIDTH], their length in cacheLength[i] (negated when Huffman-coded; 0 when empty), and the string. */
  private readonly cacheBytes = new Uint8Array(CACHE_SLOTS * CACHE_WIDTH);
  private readonly cacheLength = new Int32Array(CACHE_SLOTS);
  private readonly cacheStrings: string[] = new Array<string>(CACHE_SLOTS).fill('');

  constructor(opts?: { maxTableSize?: number; maxHeaderListSize?: number }) {
    this.settingsMax = opts?.maxTableSize ?? 4096;
    this.maxHeaderListSize = opts?.maxHeaderListSize ?? 16384;
    this.limit = this.settingsMax;
  }

  /** Octets in the dynamic table (for tests and metrics). */
  get tableSize(): number {
    return this.size;
  }

  /** The dynamic table's current maximum size, as set by the last size update (for tests). */
  get tableMaxSize(): number {
    return this.limit;
  }

  /** The dynamic table's entries, newest (index 62) first (for tests). */
  tableEntries(): Array<[name: string, value: string]> {
    const out: Array<[string, string]> = [];
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) & this.mask;
      out.push([this.names[slot]!, this.values[slot]!]);
    }
    return out;
  }

  /** Decodes one complete header block (HEADERS + CONTINUATION payloads joined). */
  decode(block: Uint8Array): DecodedBlock {
    // A Buffer view, for its latin1 conversion.
    const src = Buffer.isBuffer(block)
      ? block
      : Buffer.from(block.buffer, block.byteOffset, block.byteLength);
    const end = src.length;
    let pos = 0;
    const headers: string[] = [];
    let listSize = 0;
    let oversize = false;
    let fieldSeen = false;

    while (pos < end) {
      const b = src[pos++]!;
      let name: string;
      let value: string;

      if (b & 0x80) {
        // 6.1 Indexed Header Field: 1xxxxxxx, index with a 7-bit prefix.
        let index = b & 0x7f;
        if (index === 0x7f) {
          index = this.readInt(src, pos, end, index);
          pos = this.pos;
        }
        if (index <= STATIC_COUNT) {
          if (index === 0) throw new HpackError('HPACK: index 0');
          name = STATIC_NAMES[index]!;
          value = STATIC_VALUES[index]!;
        } else {
          const slot = this.slot(index);
          name = this.names[slot]!;
          value = this.values[slot]!;
        }
      } else if ((b & 0xe0) === 0x20) {
        // 6.3 Dynamic Table Size Update: 001xxxxx, new maximum with a 5-bit prefix. 4.2: it
        // "MUST occur at the beginning of the first header block following the change"; it may
        // be repeated there (two updates signal a decrease then an increase).
        if (fieldSeen) throw new HpackError('HPACK: dynamic table size update after a header field');
        let max = b & 0x1f;
        if (max === 0x1f) {
          max = this.readInt(src, pos, end, max);
          pos = this.pos;
        }
        if (max > this.settingsMax) throw new HpackError('HPACK: dynamic table size update above the limit');
        this.limit = max;
        this.evictTo(max);
        continue;
      } else {
        // 6.2 Literal Header Field: with incremental indexing 01xxxxxx (6-bit name index),
        // without indexing 0000xxxx or never indexed 0001xxxx (4-bit). Index 0: a literal name.
        const indexing = (b & 0x40) !== 0;
        const prefix = indexing ? 0x3f : 0x0f;
        let index = b & prefix;
        if (index === prefix) {
          index = this.readInt(src, pos, end, index);
          pos = this.pos;
        }
        // Past the limit, only a field entering the table is still needed as strings. A field
        // not indexed is often a repeat (see cached()); a never-indexed one (0001) is sensitive
        // and kept out of the cache.
        const mode = indexing ? DECODE : oversize ? SKIP : b & 0x10 ? DECODE : CACHED;
        if (index === 0) {
          name = this.readString(src, pos, end, mode);
          pos = this.pos;
        } else {
          name = index <= STATIC_COUNT ? STATIC_NAMES[index]! : this.names[this.slot(index)]!;
        }
        value = this.readString(src, pos, end, mode);
        pos = this.pos;
        if (indexing) this.insert(name, value);
      }

      fieldSeen = true;
      if (!oversize) {
        listSize += name.length + value.length + 32;
        if (listSize > this.maxHeaderListSize) {
          oversize = true;
          headers.length = 0;
        } else {
          headers.push(name, value);
        }
      }
    }
    return { headers, oversize };
  }

  /** The ring slot of dynamic-table wire index `index` (> 61); HpackError past the end (2.3.3). */
  private slot(index: number): number {
    const i = index - STATIC_COUNT - 1;
    if (i >= this.count) throw new HpackError(`HPACK: index ${index} past the table`);
    return (this.head + i) & this.mask;
  }

  /**
   * 5.1: the rest of an integer whose N-bit prefix was all ones (`value` = 2^N - 1): 7 bits per
   * octet, least significant group first, high bit set on all but the last. Sets this.pos.
   */
  private readInt(src: Uint8Array, pos: number, end: number, value: number): number {
    let scale = 1;
    // Five octets carry 35 bits, past MAX_INT; a sixth is an overflow even if it is zero padding.
    for (let i = 0; i < 5; i++) {
      if (pos >= end) throw new HpackError('HPACK: truncated integer');
      const b = src[pos++]!;
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (value > MAX_INT) break;
        this.pos = pos;
        return value;
      }
      scale *= 128;
    }
    throw new HpackError('HPACK: integer overflow');
  }

  /** 5.2 String Literal: H bit, 7-bit-prefix length, octets. Sets this.pos. */
  private readString(src: Buffer, pos: number, end: number, mode: StringMode): string {
    if (pos >= end) throw new HpackError('HPACK: truncated string');
    const b = src[pos++]!;
    let len = b & 0x7f;
    if (len === 0x7f) {
      len = this.readInt(src, pos, end, len);
      pos = this.pos;
    }
    if (len > end - pos) throw new HpackError('HPACK: string past the end of the block');
    this.pos = pos + len;
    if (mode === CACHED && len >= 4 && len <= CACHE_WIDTH)
      return this.cached(src, pos, len, (b & 0x80) !== 0);
    if (b & 0x80) return huffmanDecode(src, pos, pos + len, mode !== SKIP);
    return mode === SKIP ? '' : latin1(src, pos, pos + len);
  }

  /**
   * Decodes a string of a literal without indexing through a small direct-mapped cache of
   * (octets -> string). nghttp2, and so node:http2 and grpc-js, never indexes :path, so each
   * call of a gRPC method resends the same Huffman string; a byte compare returns the string
   * decoded last time, in place of decoding and allocating it again.
   */
  private cached(src: Buffer, pos: number, len: number, huffman: boolean): string {
    const slot =
      (len + src[pos]! + 3 * src[pos + (len >>> 1)]! + 5 * src[pos + len - 1]!) & (CACHE_SLOTS - 1);
    const tag = huffman ? -len : len;
    const bytes = this.cacheBytes;
    const base = slot * CACHE_WIDTH;
    if (this.cacheLength[slot] === tag) {
      let i = 0;
      while (i < len && bytes[base + i] === src[pos + i]) i++;
      if (i === len) return this.cacheStrings[slot]!;
    }
    const s = huffman ? huffmanDecode(src, pos, pos + len, true) : latin1(src, pos, pos + len);
    for (let i = 0; i < len; i++) bytes[base + i] = src[pos + i]!;
    this.cacheLength[slot] = tag;
    this.cacheStrings[slot] = s;
    return s;
  }

  /** 4.4: adds an entry at the front, evicting from the end to make room. */
  private insert(name: string, value: string): void {
    const size = name.length + value.length + 32;
    if (size > this.limit) {
      // "an attempt to add an entry larger than the maximum size causes the table to be emptied".
      this.evictTo(0);
      return;
    }
    this.evictTo(this.limit - size);
    if (this.count > this.mask) this.grow();
    this.head = (this.head - 1) & this.mask;
    this.names[this.head] = name;
    this.values[this.head] = value;
    this.count++;
    this.size += size;
  }

  /** 4.3/4.4: evicts the oldest entries until the table holds at most `target` octets. */
  private evictTo(target: number): void {
    while (this.size > target) {
      const slot = (this.head + this.count - 1) & this.mask;
      this.size -= this.names[slot]!.length + this.values[slot]!.length + 32;
      this.names[slot] = '';
      this.values[slot] = '';
      this.count--;
    }
  }

  private grow(): void {
    const cap = 2 * (this.mask + 1);
    const names = new Array<string>(cap).fill('');
    const values = new Array<string>(cap).fill('');
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) & this.mask;
      names[i] = this.names[slot]!;
      values[i] = this.values[slot]!;
    }
    this.names = names;
    this.values = values;
    this.mask = cap - 1;
    this.head = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoder

/** Octets of integer `v` with an N-bit prefix (5.1). */
function intSize(v: number, prefixBits: number): number {
  const max = (1 << prefixBits) - 1;
  if (v < max) return 1;
  let n = 2;
  for (v -= max; v >= 128; v = Math.floor(v / 128)) n++;
  return n;
}

/** Writes integer `v` with an N-bit prefix, OR-ing `flags` into the first octet (5.1). */
function writeInt(out: Buffer, pos: number, v: number, prefixBits: number, flags: number): number {
  const max = (1 << prefixBits) - 1;
  if (v < max) {
    out[pos++] = flags | v;
    return pos;
  }
  out[pos++] = flags | max;
  for (v -= max; v >= 128; v = Math.floor(v / 128)) out[pos++] = (v % 128) | 0x80;
  out[pos++] = v;
  return pos;
}

/** A dynamic table size update to `size` (6.3): the integer with a 5-bit prefix after `001`. */
export function encodeTableSizeUpdate(size: number): Buffer {
  const out = Buffer.allocUnsafe(intSize(size, 5));
  writeInt(out, 0, size, 5, 0x20);
  return out;
}

/**
 * Encodes header fields for a response: each as a literal WITHOUT indexing (6.2.2, so the encoder
 * keeps no state), using the static table's name index when the name is in it, raw (non-Huffman)
 * strings. Exception: `:status` `200` as the indexed static field (0x88). Returns one Buffer.
 * Strings are written latin1 (one octet per char): callers keep them to chars below 0x100.
 */
export function encodeHeaders(fields: ReadonlyArray<readonly [name: string, value: string]>): Buffer {
  let size = 0;
  for (const [name, value] of fields) {
    if (name === ':status' && value === '200') {
      size += 1;
      continue;
    }
    const index = STATIC_NAME_INDEX.get(name);
    size += index === undefined ? 1 + intSize(name.length, 7) + name.length : intSize(index, 4);
    size += intSize(value.length, 7) + value.length;
  }
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const [name, value] of fields) {
    if (name === ':status' && value === '200') {
      out[pos++] = 0x88; // 6.1, static index 8
      continue;
    }
    const index = STATIC_NAME_INDEX.get(name);
    if (index === undefined) {
      out[pos++] = 0x00; // 0000 + index 0: a literal name follows
      pos = writeInt(out, pos, name.length, 7, 0x00); // H = 0
      pos += out.write(name, pos, 'latin1');
    } else {
      pos = writeInt(out, pos, index, 4, 0x00);
    }
    pos = writeInt(out, pos, value.length, 7, 0x00);
    pos += out.write(value, pos, 'latin1');
  }
  return out;
}
