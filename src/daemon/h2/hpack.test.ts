import { connect, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  encodeHeaders,
  HpackDecoder,
  HpackError,
  HUFFMAN_CODES,
  HUFFMAN_LENGTHS,
  STATIC_TABLE,
} from './hpack.js';

/** Bytes from the RFC's hex dumps (spaces and newlines ignored). */
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** [name, value] pairs from a decoded flat list. */
function pairs(flat: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

/** Test-side integer encoder (5.1), independent of the module's. */
function int(v: number, prefixBits: number, flags = 0): number[] {
  const max = 2 ** prefixBits - 1;
  if (v < max) return [flags | v];
  const out = [flags | max];
  for (v -= max; v >= 128; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
  return out;
}

/** A raw (H = 0) string literal. */
const str = (s: string): number[] => [...int(s.length, 7), ...Buffer.from(s, 'latin1')];

describe('HPACK tables', () => {
  it('Huffman code (Appendix B) is complete, canonical, with EOS as 30 ones', () => {
    expect(HUFFMAN_CODES).toHaveLength(257);
    expect(HUFFMAN_LENGTHS).toHaveLength(257);
    // Kraft equality, exactly: sum of 2^-len == 1, scaled by 2^30.
    let kraft = 0;
    for (const len of HUFFMAN_LENGTHS) kraft += 2 ** (30 - len);
    expect(kraft).toBe(2 ** 30);
    expect(HUFFMAN_CODES[256]).toBe(2 ** 30 - 1);
    expect(HUFFMAN_LENGTHS[256]).toBe(30);
    // The RFC's code is canonical: ordered by (length, symbol), each code is the previous plus
    // one, shifted to the new length. Recomputing the codes from the lengths alone cross-checks
    // the two transcribed columns against each other.
    const order = [...Array(257).keys()].sort((a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b);
    let code = 0;
    let len = HUFFMAN_LENGTHS[order[0]!]!;
    for (const sym of order) {
      code *= 2 ** (HUFFMAN_LENGTHS[sym]! - len);
      len = HUFFMAN_LENGTHS[sym]!;
      expect([sym, HUFFMAN_CODES[sym]]).toEqual([sym, code]);
      code++;
    }
    // Spot checks against the RFC's rows.
    expect([HUFFMAN_CODES[48], HUFFMAN_LENGTHS[48]]).toEqual([0x0, 5]); // '0'
    expect([HUFFMAN_CODES[97], HUFFMAN_LENGTHS[97]]).toEqual([0x3, 5]); // 'a'
    expect([HUFFMAN_CODES[0], HUFFMAN_LENGTHS[0]]).toEqual([0x1ff8, 13]);
    expect([HUFFMAN_CODES[255], HUFFMAN_LENGTHS[255]]).toEqual([0x3ffffee, 26]);
  });

  it('static table (Appendix A)', () => {
    expect(STATIC_TABLE).toHaveLength(61);
    // Name lengths of indexes 1..61, and the entries with values.
    expect(STATIC_TABLE.map(([n]) => n.length)).toEqual([
      10, 7, 7, 5, 5, 7, 7, 7, 7, 7, 7, 7, 7, 7, 14, 15, 15, 13, 6, 27, 3, 5, 13, 13, 19, 16, 16, 14, 16, 13,
      12, 6, 4, 4, 6, 7, 4, 4, 8, 17, 13, 8, 19, 13, 4, 8, 12, 18, 19, 5, 7, 7, 11, 6, 10, 25, 17, 10, 4, 3,
      16,
    ]);
    const valued = STATIC_TABLE.map(([n, v], i) => [i + 1, n, v] as const).filter(([, , v]) => v !== '');
    expect(valued).toEqual([
      [2, ':method', 'GET'],
      [3, ':method', 'POST'],
      [4, ':path', '/'],
      [5, ':path', '/index.html'],
      [6, ':scheme', 'http'],
      [7, ':scheme', 'https'],
      [8, ':status', '200'],
      [9, ':status', '204'],
      [10, ':status', '206'],
      [11, ':status', '304'],
      [12, ':status', '400'],
      [13, ':status', '404'],
      [14, ':status', '500'],
      [16, 'accept-encoding', 'gzip, deflate'],
    ]);
    expect(STATIC_TABLE[30]).toEqual(['content-type', '']);
    expect(STATIC_TABLE[60]).toEqual(['www-authenticate', '']);
  });
});

describe('RFC 7541 Appendix C', () => {
  it('C.1 integer representation', () => {
    const d = new HpackDecoder();
    // C.1.1: 10 on a 5-bit prefix (a size update carries one).
    d.decode(hex('2a'));
    expect(d.tableMaxSize).toBe(10);
    // C.1.2: 1337 on a 5-bit prefix: 1f 9a 0a.
    d.decode(hex('3f 9a 0a'));
    expect(d.tableMaxSize).toBe(1337);
    // C.1.3 puts 42 on an 8-bit prefix, which no HPACK representation uses; 42 on the 7-bit
    // index prefix is static entry 42, and a 127 (the prefix's all-ones) needs a second octet.
    expect(pairs(d.decode(hex('aa')).headers)).toEqual([['if-range', '']]);
    expect(() => d.decode(hex('ff'))).toThrow(HpackError);
    // The encoder's side: a 1337-octet value length on the 7-bit prefix is 7f ba 09.
    const enc = encodeHeaders([['x', 'v'.repeat(1337)]]);
    expect([...enc.subarray(0, 6)]).toEqual([0x00, 0x01, 0x78, 0x7f, 0xba, 0x09]);
  });

  it('C.2.1 literal header field with indexing', () => {
    const d = new HpackDecoder();
    const r = d.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'));
    expect(r).toEqual({ headers: ['custom-key', 'custom-header'], oversize: false });
    expect(d.tableEntries()).toEqual([['custom-key', 'custom-header']]);
    expect(d.tableSize).toBe(55);
  });

  it('C.2.2 literal header field without indexing', () => {
    const d = new HpackDecoder();
    expect(d.decode(hex('040c 2f73 616d 706c 652f 7061 7468')).headers).toEqual([':path', '/sample/path']);
    expect(d.tableEntries()).toEqual([]);
    expect(d.tableSize).toBe(0);
  });

  it('C.2.3 literal header field never indexed', () => {
    const d = new HpackDecoder();
    expect(d.decode(hex('1008 7061 7373 776f 7264 0673 6563 7265 74')).headers).toEqual([
      'password',
      'secret',
    ]);
    expect(d.tableEntries()).toEqual([]);
  });

  it('C.2.4 indexed header field', () => {
    const d = new HpackDecoder();
    expect(d.decode(hex('82')).headers).toEqual([':method', 'GET']);
    expect(d.tableSize).toBe(0);
  });

  // C.3 and C.4 are the same requests, without and with Huffman coding.
  const requests = [
    {
      plain: '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      huffman: '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
      headers: [':method', 'GET', ':scheme', 'http', ':path', '/', ':authority', 'www.example.com'],
      table: [[':authority', 'www.example.com']],
      size: 57,
    },
    {
      plain: '8286 84be 5808 6e6f 2d63 6163 6865',
      huffman: '8286 84be 5886 a8eb 1064 9cbf',
      headers: [
        ...[':method', 'GET', ':scheme', 'http', ':path', '/', ':authority', 'www.example.com'],
        ...['cache-control', 'no-cache'],
      ],
      table: [
        ['cache-control', 'no-cache'],
        [':authority', 'www.example.com'],
      ],
      size: 110,
    },
    {
      plain: '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
      huffman: '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
      headers: [
        ...[':method', 'GET', ':scheme', 'https', ':path', '/index.html', ':authority', 'www.example.com'],
        ...['custom-key', 'custom-value'],
      ],
      table: [
        ['custom-key', 'custom-value'],
        ['cache-control', 'no-cache'],
        [':authority', 'www.example.com'],
      ],
      size: 164,
    },
  ];

  for (const [section, coding] of [
    ['C.3', 'plain'],
    ['C.4', 'huffman'],
  ] as const) {
    it(`${section} requests ${coding === 'plain' ? 'without' : 'with'} Huffman coding`, () => {
      const d = new HpackDecoder();
      for (const req of requests) {
        expect(d.decode(hex(req[coding]))).toEqual({ headers: req.headers, oversize: false });
        expect(d.tableEntries()).toEqual(req.table);
        expect(d.tableSize).toBe(req.size);
      }
    });
  }

  // C.5 and C.6: responses with SETTINGS_HEADER_TABLE_SIZE 256, so entries get evicted.
  const date1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
  const date2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
  const location = 'https://www.example.com';
  const cookie = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
  const responses = [
    {
      plain: `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
              2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
              6c65 2e63 6f6d`,
      huffman: `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
                2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`,
      headers: [':status', '302', 'cache-control', 'private', 'date', date1, 'location', location],
      table: [
        ['location', location],
        ['date', date1],
        ['cache-control', 'private'],
        [':status', '302'],
      ],
      size: 222,
    },
    {
      plain: '4803 3330 37c1 c0bf',
      huffman: '4883 640e ffc1 c0bf',
      headers: [':status', '307', 'cache-control', 'private', 'date', date1, 'location', location],
      table: [
        [':status', '307'],
        ['location', location],
        ['date', date1],
        ['cache-control', 'private'],
      ],
      size: 222,
    },
    {
      plain: `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
              54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
              5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
              3d31`,
      huffman: `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
                77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
                9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
      headers: [
        ...[':status', '200', 'cache-control', 'private', 'date', date2, 'location', location],
        ...['content-encoding', 'gzip', 'set-cookie', cookie],
      ],
      table: [
        ['set-cookie', cookie],
        ['content-encoding', 'gzip'],
        ['date', date2],
      ],
      size: 215,
    },
  ];

  for (const [section, coding] of [
    ['C.5', 'plain'],
    ['C.6', 'huffman'],
  ] as const) {
    it(`${section} responses ${coding === 'plain' ? 'without' : 'with'} Huffman coding (256-octet table)`, () => {
      const d = new HpackDecoder({ maxTableSize: 256 });
      for (const res of responses) {
        expect(d.decode(hex(res[coding]))).toEqual({ headers: res.headers, oversize: false });
        expect(d.tableEntries()).toEqual(res.table);
        expect(d.tableSize).toBe(res.size);
      }
    });
  }
});

describe('HpackDecoder', () => {
  it('rejects malformed blocks with HpackError', () => {
    const bad: Array<[string, number[], RegExp?]> = [
      ['index 0', [0x80]],
      ['index past the static table, dynamic table empty', [0xbe]],
      ['literal name index past the table', [0x0f, 0x30, 0x01, 0x61]],
      ['truncated integer (prefix all ones, nothing after)', [0xff], /truncated integer/],
      ['truncated integer (continuation flag on the last octet)', [0xff, 0x80], /truncated integer/],
      // Integers are capped at 2^31 - 1: that one is only an index past the table, 2^31 overflows.
      ['index 2^31 - 1', int(2 ** 31 - 1, 7, 0x80), /past the table/],
      ['integer overflow (2^31)', int(2 ** 31, 7, 0x80), /overflow/],
      ['integer overflow', [0xff, 0xff, 0xff, 0xff, 0xff, 0x0f], /overflow/],
      ['integer of six continuation octets', [0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], /overflow/],
      ['string length overflow', [0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0x0f], /overflow/],
      ['string length past the end', [0x40, 0x0a, 0x61]],
      ['string length missing', [0x40]],
      // 'a' is 00011; then 11 bits of ones: padding longer than 7 bits (5.2).
      ['Huffman padding longer than 7 bits', [0x01, 0x82, 0x1f, 0xff]],
      // '&' is 11111000; then exactly 8 bits of ones.
      ['Huffman padding of 8 bits', [0x01, 0x82, 0xf8, 0xff]],
      // 'a' then 000: padding that is not the EOS prefix.
      ['Huffman padding not ones', [0x01, 0x81, 0x18]],
      // 32 ones: EOS (30 ones) is decoded.
      ['EOS in a Huffman string', [0x01, 0x84, 0xff, 0xff, 0xff, 0xff]],
      // 'a' then EOS then padding.
      ['EOS after a symbol', [0x01, 0x85, 0x1f, 0xff, 0xff, 0xff, 0xfc]],
      ['size update above the maximum (4097)', [0x3f, 0xe2, 0x1f]],
      ['size update after a header field', [0x82, 0x20]],
      ['size update after a literal', [0x01, 0x00, 0x3f, 0xe1, 0x1f]],
    ];
    for (const [what, bytes, message] of bad) {
      expect(() => new HpackDecoder().decode(Buffer.from(bytes)), what).toThrow(HpackError);
      if (message) expect(() => new HpackDecoder().decode(Buffer.from(bytes)), what).toThrow(message);
    }
  });

  it('accepts the valid neighbours of those', () => {
    const d = new HpackDecoder();
    // The same shapes, made valid: last static index, padding of 3 ones, exactly 4096, two
    // updates in a row at the start.
    expect(d.decode(Buffer.from([0xbd])).headers).toEqual(['www-authenticate', '']);
    expect(d.decode(Buffer.from([0x01, 0x81, 0x1f])).headers).toEqual([':authority', 'a']);
    // '&' then 'a' (8 + 5 bits) and 3 ones; 'a' then '&' (5 + 8 bits) and 3 ones.
    expect(d.decode(Buffer.from([0x01, 0x82, 0xf8, 0x1f])).headers).toEqual([':authority', '&a']);
    expect(d.decode(Buffer.from([0x01, 0x82, 0x1f, 0xc7])).headers).toEqual([':authority', 'a&']);
    expect(d.decode(Buffer.from([0x3f, 0xe1, 0x1f, 0x82])).headers).toEqual([':method', 'GET']);
    expect(d.tableMaxSize).toBe(4096);
    expect(d.decode(Buffer.from([0x20, 0x3f, 0xe1, 0x1f])).headers).toEqual([]);
    // An empty Huffman string, and an empty block.
    expect(d.decode(Buffer.from([0x01, 0x80])).headers).toEqual([':authority', '']);
    expect(d.decode(Buffer.alloc(0))).toEqual({ headers: [], oversize: false });
    // A Uint8Array that is not a Buffer, at an offset into a larger buffer.
    const u = new Uint8Array([0, 0, 0x01, 0x03, 0x61, 0x62, 0x63, 0]).subarray(2, 7);
    expect(d.decode(u).headers).toEqual([':authority', 'abc']);
  });

  it('evicts by RFC size rules; a size update shrinks the table; an oversized entry empties it', () => {
    const d = new HpackDecoder({ maxTableSize: 200 });
    // Three entries of 10 + 50 + 32 = 92 octets: the third evicts the first.
    const lit = (n: string, v: string) => [0x40, ...str(n), ...str(v)];
    d.decode(Buffer.from([...lit('name-00001', 'a'.repeat(50)), ...lit('name-00002', 'b'.repeat(50))]));
    expect(d.tableSize).toBe(184);
    d.decode(Buffer.from(lit('name-00003', 'c'.repeat(50))));
    expect(d.tableEntries().map(([n]) => n)).toEqual(['name-00003', 'name-00002']);
    expect(d.tableSize).toBe(184);
    // A new entry may name an entry it evicts (4.4): index 63 is name-00002, the oldest.
    d.decode(Buffer.from([0x7f, 0x00, ...str('d'.repeat(50))]));
    expect(d.tableEntries()).toEqual([
      ['name-00002', 'd'.repeat(50)],
      ['name-00003', 'c'.repeat(50)],
    ]);
    // Size update to 100 keeps one entry; to 0 empties the table.
    d.decode(Buffer.from([0x3f, 0x45]));
    expect(d.tableMaxSize).toBe(100);
    expect(d.tableEntries().map(([n]) => n)).toEqual(['name-00002']);
    d.decode(Buffer.from([0x20]));
    expect(d.tableSize).toBe(0);
    // Back to 200; an entry of 201 octets empties the table and is not added.
    d.decode(Buffer.from([0x3f, 0xa9, 0x01, ...lit('k', 'v')]));
    expect(d.tableSize).toBe(34);
    d.decode(Buffer.from(lit('k', 'v'.repeat(168))));
    expect(d.tableEntries()).toEqual([]);
    expect(d.tableSize).toBe(0);
  });

  it('many entries: the ring grows and indexes stay right', () => {
    const d = new HpackDecoder({ maxTableSize: 65536, maxHeaderListSize: 1 << 20 });
    const block: number[] = [];
    for (let i = 0; i < 1000; i++) block.push(0x40, ...str(`k${i}`), ...str(`v${i}`));
    expect(pairs(d.decode(Buffer.from(block)).headers)).toHaveLength(1000);
    const entries = d.tableEntries();
    expect(entries).toHaveLength(1000);
    expect(entries[0]).toEqual(['k999', 'v999']);
    expect(entries[999]).toEqual(['k0', 'v0']);
    // Index 62 + 999 = 1061 is k0.
    expect(d.decode(Buffer.from(int(1061, 7, 0x80))).headers).toEqual(['k0', 'v0']);
    expect(() => d.decode(Buffer.from(int(1062, 7, 0x80)))).toThrow(HpackError);
  });

  it('repeated literals without indexing decode right (through the repeat cache)', () => {
    const d = new HpackDecoder();
    const path = (value: number[]) => d.decode(Buffer.from([0x04, ...value])).headers[1];
    // Same length and the same octets at the hashed places (first, middle, last): same slot.
    for (let i = 0; i < 3; i++) {
      expect(path(str('/abcd'))).toBe('/abcd');
      expect(path(str('/xbcd'))).toBe('/xbcd');
    }
    // The same octets, Huffman-coded and raw, are different strings.
    const huffman = [...hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff')];
    for (let i = 0; i < 2; i++) {
      expect(path([0x80 | huffman.length, ...huffman])).toBe('www.example.com');
      expect(path([huffman.length, ...huffman])).toBe(Buffer.from(huffman).toString('latin1'));
    }
    // Never indexed (0001): decoded each time, same result.
    expect(d.decode(Buffer.from([0x14, 0x80 | huffman.length, ...huffman])).headers).toEqual([
      ':path',
      'www.example.com',
    ]);
    // A bad Huffman string is an error every time, not cached.
    for (let i = 0; i < 2; i++) expect(() => path([0x84, 0xff, 0xff, 0xff, 0xff])).toThrow(HpackError);
  });

  it('an HPACK bomb is cut off as oversize and the table stays in sync', () => {
    const d = new HpackDecoder();
    const big = 'v'.repeat(4000);
    const bomb = Buffer.from([
      ...[0x40, ...str('x-big'), ...str(big)], // 4037 octets in the table
      ...Array<number>(1000).fill(0xbe), // 1000 references: a 4 MB header list
      ...[0x40, ...str('x-after'), ...str('1')], // past the limit, but it still enters the table
      ...[0x01, 0x81, 0x1f], // not indexed, past the limit: validated, not kept
    ]);
    const t0 = performance.now();
    const r = d.decode(bomb);
    expect(performance.now() - t0).toBeLessThan(100);
    expect(r).toEqual({ headers: [], oversize: true });
    expect(d.tableEntries()).toEqual([
      ['x-after', '1'],
      ['x-big', big],
    ]);
    expect(d.tableSize).toBe(4077);
    // Past the limit a malformed string is still an error.
    expect(() => new HpackDecoder().decode(Buffer.concat([bomb, Buffer.from([0x01, 0x81, 0x18])]))).toThrow(
      HpackError,
    );
    // The next block decodes against the same table.
    expect(d.decode(Buffer.from([0x82, 0xbe, 0xbf]))).toEqual({
      headers: [':method', 'GET', 'x-after', '1', 'x-big', big],
      oversize: false,
    });
    // The limit counts name + value + 32 per field: 16384 fits exactly, one more octet does not.
    const small = new HpackDecoder({ maxHeaderListSize: 100 });
    expect(small.decode(Buffer.from([0x00, ...str('n'), ...str('v'.repeat(67))])).oversize).toBe(false);
    expect(small.decode(Buffer.from([0x00, ...str('n'), ...str('v'.repeat(68))])).oversize).toBe(true);
  });
});

describe('encodeHeaders', () => {
  it('encodes literals without indexing, static names indexed, :status 200 as 0x88', () => {
    const out = encodeHeaders([
      [':status', '200'],
      ['content-type', 'application/grpc'],
      ['grpc-status', '0'],
    ]);
    expect(out.toString('hex')).toBe(
      '88' +
        '0f10' + // 0000 + index 31 (15 + 16)
        '10' +
        Buffer.from('application/grpc').toString('hex') +
        '000b' +
        Buffer.from('grpc-status').toString('hex') +
        '0130',
    );
    // Another status is a literal with the static name :status (index 8).
    expect(encodeHeaders([[':status', '404']]).toString('hex')).toBe('0803343034');
    expect(encodeHeaders([])).toHaveLength(0);
  });

  it('round-trips through HpackDecoder, leaving its table empty', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const d = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
    for (let round = 0; round < 50; round++) {
      const fields: Array<[string, string]> = [[':status', round % 5 ? '200' : '503']];
      for (let i = rand(8); i > 0; i--) {
        const name = rand(2) ? STATIC_TABLE[rand(61)]![0] : `x-field-${'n'.repeat(rand(200))}`;
        let value = '';
        for (let j = rand(3) ? rand(40) : rand(1000); j > 0; j--) value += String.fromCharCode(rand(256));
        fields.push([name, value]);
      }
      expect(pairs(d.decode(encodeHeaders(fields)).headers)).toEqual(fields);
    }
    expect(d.tableSize).toBe(0);
  });
});

/** One frame: 9-octet header (RFC 7540 4.1) and payload. */
function frame(type: number, flags: number, stream: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
const FLAG_END_STREAM = 0x1;
const FLAG_ACK = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;
const FLAG_PRIORITY = 0x20;

/**
 * Just enough of an HTTP/2 server to collect each stream's header block: the preface, an empty
 * SETTINGS, ACKs of the client's, HEADERS + CONTINUATION joined. `onBlock` returns the response
 * header block to send (HEADERS with END_STREAM).
 */
async function rawH2Server(onBlock: (stream: number, block: Buffer) => Buffer) {
  const sockets = new Set<Socket>();
  const errors: unknown[] = [];
  const server = createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    sock.write(frame(4, 0, 0));
    let buf = Buffer.alloc(0);
    let preface = false;
    let pending: { stream: number; parts: Buffer[] } | undefined;
    const complete = (stream: number, block: Buffer) => {
      try {
        sock.write(frame(1, FLAG_END_HEADERS | FLAG_END_STREAM, stream, onBlock(stream, block)));
      } catch (e) {
        errors.push(e);
        sock.destroy();
      }
    };
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!preface) {
        if (buf.length < 24) return;
        if (buf.subarray(0, 24).toString('latin1') !== PREFACE) throw new Error('bad preface');
        buf = buf.subarray(24);
        preface = true;
      }
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) break;
        const [type, flags] = [buf[3]!, buf[4]!];
        const stream = buf.readUInt32BE(5) & 0x7fffffff;
        const payload = buf.subarray(9, 9 + len);
        buf = buf.subarray(9 + len);
        if (type === 4 && !(flags & FLAG_ACK)) {
          sock.write(frame(4, FLAG_ACK, 0));
        } else if (type === 6 && !(flags & FLAG_ACK)) {
          sock.write(frame(6, FLAG_ACK, 0, payload));
        } else if (type === 1) {
          // RFC 7540 6.2: Pad Length (if PADDED), E + Stream Dependency + Weight (if PRIORITY),
          // the fragment, then the padding.
          let start = 0;
          let padding = 0;
          if (flags & FLAG_PADDED) {
            padding = payload[0]!;
            start = 1;
          }
          if (flags & FLAG_PRIORITY) start += 5;
          const fragment = payload.subarray(start, payload.length - padding);
          if (flags & FLAG_END_HEADERS) complete(stream, fragment);
          else pending = { stream, parts: [fragment] };
        } else if (type === 9 && pending) {
          pending.parts.push(payload);
          if (flags & FLAG_END_HEADERS) {
            complete(pending.stream, Buffer.concat(pending.parts));
            pending = undefined;
          }
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    errors,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('cross-check against node:http2 (nghttp2)', () => {
  it('decodes nghttp2-encoded request blocks exactly; nghttp2 decodes encodeHeaders', async () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    // Printable ASCII plus tab and some latin1 octets (node sends header strings as latin1).
    const alphabet = [9, ...Array.from({ length: 95 }, (_, i) => 32 + i), 0x80, 0xa9, 0xe9, 0xff];
    const randomValue = (max: number) => {
      let v = '';
      for (let n = rand(max + 1); n > 0; n--) v += String.fromCharCode(alphabet[rand(alphabet.length)]!);
      return v;
    };
    const pool = Array.from({ length: 6 }, () => randomValue(300));
    const tokens = Array.from({ length: 3 }, () => `Bearer ${randomValue(40).replace(/[^\w]/g, 'x')}`);
    const methods = ['SignTransaction', 'GetActivity', 'SignRawPayloads', 'WatchActivity'];

    const decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
    const decoded = new Map<number, Array<[string, string]>>();
    const responseFor = (i: number): Array<[string, string]> => [
      [':status', i % 7 === 3 ? '404' : '200'],
      ['content-type', 'application/grpc'],
      ['grpc-accept-encoding', 'identity,gzip'],
      ['x-request', String(i)],
      ['x-padding', 'p'.repeat(i * 3)],
    ];
    const server = await rawH2Server((stream, block) => {
      decoded.set(stream, pairs(decoder.decode(block).headers));
      return encodeHeaders(responseFor((stream - 1) / 2));
    });
    const session = connect(`http://127.0.0.1:${server.port}`);
    // A decoding failure on the server side closes the connection: fail now, not at the timeout.
    let failCurrent = (_: Error): void => {};
    session.on('close', () => failCurrent(new Error(`session closed: ${server.errors.join('; ')}`)));
    try {
      const sent: Array<Array<[string, string]>> = [];
      const received: IncomingHttpHeaders[] = [];
      for (let i = 0; i < 50; i++) {
        const headers: Record<string, string> = {
          ':method': 'POST',
          ':scheme': 'http',
          ':authority': `127.0.0.1:${server.port}`,
          ':path': `/countersign.v1.Signer/${methods[rand(methods.length)]}`,
          'content-type': 'application/grpc',
          te: 'trailers',
          'user-agent': 'grpc-node-js/1.14.7',
          'grpc-timeout': `${rand(100000)}m`,
          authorization: tokens[rand(tokens.length)]!,
        };
        for (let k = rand(6); k > 0; k--) {
          headers[`x-custom-${rand(10)}`] = rand(2) ? pool[rand(pool.length)]! : randomValue(300);
        }
        // One block past 16 KiB, so nghttp2 splits it into HEADERS + CONTINUATION.
        if (i === 25)
          for (let k = 0; k < 30; k++) headers[`x-bulk-${k}`] = randomValue(600) + 'q'.repeat(600);
        sent.push(Object.entries(headers));
        received.push(
          await new Promise<IncomingHttpHeaders>((resolve, reject) => {
            const req = session.request(headers as OutgoingHttpHeaders, { endStream: true });
            let response: IncomingHttpHeaders | undefined;
            req.on('response', (h) => (response = h));
            req.on('error', reject);
            req.on('close', () =>
              response
                ? resolve(response)
                : reject(new Error(`no response to ${i}: ${server.errors.join('; ')}`)),
            );
            failCurrent = reject;
            req.resume();
          }),
        );
      }
      expect(server.errors).toEqual([]);
      expect(decoded.size).toBe(50);
      const sort = (l: Array<[string, string]>) => [...l].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (let i = 0; i < 50; i++)
        expect(sort(decoded.get(2 * i + 1)!), `request ${i}`).toEqual(sort(sent[i]!));
      // The dynamic table was used and filled (so entries were evicted along the way).
      expect(decoder.tableSize).toBeGreaterThan(3000);
      for (let i = 0; i < 50; i++) {
        const r = received[i]!;
        const want = responseFor(i);
        expect(r[':status'], `response ${i}`).toBe(Number(want[0]![1]));
        for (const [name, value] of want.slice(1)) expect(r[name], `response ${i} ${name}`).toBe(value);
      }
    } finally {
      if (!session.closed) await new Promise<void>((resolve) => session.close(resolve));
      session.destroy();
      await server.close();
    }
  });
});
