import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { hex, toHex } from '../../test/vectors/solana/keys.js';
import { decodeShortVec, encodeShortVec } from './shortVec.js';

describe('compact-u16', () => {
  it.each([
    [0, '00'],
    [0x7f, '7f'],
    [0x80, '8001'],
    [0x3fff, 'ff7f'],
    [0x4000, '808001'],
    [0xffff, 'ffff03'],
  ])('encodes %i as %s and decodes it back', (value, encoded) => {
    expect(toHex(encodeShortVec(value))).toBe(encoded);
    expect(decodeShortVec(hex(encoded), 0, 'n')).toEqual([value, encoded.length / 2]);
  });

  it.each([
    ['an alias with a trailing zero byte', '8000', 'not minimally encoded'],
    ['a three-byte alias', '808000', 'not minimally encoded'],
    ['a value above 0xffff', 'ffff04', 'exceeds 0xffff'],
    ['a continuation bit on the third byte', '808080', 'exceeds 0xffff'],
    ['a truncated value', '80', 'truncated'],
    ['nothing', '', 'truncated'],
  ])('rejects %s', (_name, encoded, reason) => {
    expect(() => decodeShortVec(hex(encoded), 0, 'n')).toThrow(reason);
    expect(() => decodeShortVec(hex(encoded), 0, 'n')).toThrow(CountersignError);
  });

  it('refuses to encode values outside 0..0xffff', () => {
    expect(() => encodeShortVec(0x10000)).toThrow(RangeError);
    expect(() => encodeShortVec(-1)).toThrow(RangeError);
  });

  it('round trips every value and reads only its own bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), fc.uint8Array({ maxLength: 3 }), (v, tail) => {
        const enc = encodeShortVec(v);
        const buf = Uint8Array.from([...enc, ...tail]);
        expect(decodeShortVec(buf, 0, 'n')).toEqual([v, enc.length]);
      }),
    );
  });
});
