import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { decodeFields, encodeFields, readVarint, varintLength, type ProtoField } from './protobuf.js';

const h = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const hx = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function expectMalformed(fn: () => unknown, message: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe('TRON_MALFORMED_TRANSACTION');
  expect((err as CountersignError).message).toMatch(/^failed to pre-parse Tron transaction: /);
  expect((err as CountersignError).message).toContain(message);
}

const protoField: fc.Arbitrary<ProtoField> = fc.oneof(
  fc.record({
    field: fc.integer({ min: 1, max: 0x1fffffff }),
    wireType: fc.constant(0 as const),
    value: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  }),
  fc.record({
    field: fc.integer({ min: 1, max: 0x1fffffff }),
    wireType: fc.constant(2 as const),
    value: fc.uint8Array({ maxLength: 200 }),
  }),
  fc.record({
    field: fc.integer({ min: 1, max: 300 }),
    wireType: fc.constant(1 as const),
    value: fc.uint8Array({ minLength: 8, maxLength: 8 }),
  }),
  fc.record({
    field: fc.integer({ min: 1, max: 300 }),
    wireType: fc.constant(5 as const),
    value: fc.uint8Array({ minLength: 4, maxLength: 4 }),
  }),
);
const sortedFields = fc
  .array(protoField, { maxLength: 8 })
  .map((fs) => [...fs].sort((a, b) => a.field - b.field));

describe('varints', () => {
  it.each([
    [0n, '00'],
    [1n, '01'],
    [127n, '7f'],
    [128n, '8001'],
    [300n, 'ac02'],
    [1_700_000_060_000n, 'e0a499ffbc31'],
    [(1n << 64n) - 1n, 'ffffffffffffffffff01'],
  ])('encodes %s as %s and reads it back', (value, expected) => {
    const bytes = encodeFields([{ field: 1, wireType: 0, value }]);
    expect(hx(bytes)).toBe(`08${expected}`);
    expect(varintLength(value)).toBe(expected.length / 2);
    expect(readVarint(h(expected), 0, expected.length / 2, 'x')).toEqual([value, expected.length / 2]);
  });

  it('rejects an overlong varint (trailing 0x00 group)', () =>
    expectMalformed(() => readVarint(h('8100'), 0, 2, 'x'), 'overlong'));
  it('rejects a zero written in two bytes', () =>
    expectMalformed(() => readVarint(h('8000'), 0, 2, 'x'), 'overlong'));
  it('rejects a varint longer than 10 bytes', () =>
    expectMalformed(() => readVarint(h(`${'80'.repeat(10)}01`), 0, 11, 'x'), 'longer than 10 bytes'));
  it('rejects a 10-byte varint above 2^64 - 1', () =>
    expectMalformed(() => readVarint(h(`${'ff'.repeat(9)}02`), 0, 10, 'x'), 'exceeds 64 bits'));
  it('rejects a truncated varint', () => expectMalformed(() => readVarint(h('ff'), 0, 1, 'x'), 'truncated'));
});

describe('decodeFields', () => {
  it('round-trips decode(encode(x)) on random ordered field lists', () => {
    fc.assert(
      fc.property(sortedFields, (fields) => {
        const bytes = encodeFields(fields);
        const decoded = decodeFields(bytes, 'm');
        expect(decoded).toEqual(fields);
        expect(hx(encodeFields(decoded))).toBe(hx(bytes));
      }),
    );
  });

  it('accepts exactly the canonical encoding: any bytes it accepts re-encode to themselves', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        let fields: ProtoField[];
        try {
          fields = decodeFields(bytes, 'm');
        } catch {
          return;
        }
        expect(hx(encodeFields(fields))).toBe(hx(bytes));
      }),
      { numRuns: 5000 },
    );
  });

  it('never throws anything but CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          decodeFields(bytes, 'm');
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('returns views into the input, not copies', () => {
    const input = h('0a03010203');
    const [f] = decodeFields(input, 'm');
    expect(f?.wireType === 2 && f.value.buffer).toBe(input.buffer);
  });

  it('accepts an empty message', () => expect(decodeFields(new Uint8Array(0), 'm')).toEqual([]));
  it('rejects field number 0', () => expectMalformed(() => decodeFields(h('0001'), 'm'), 'field number 0'));
  it('rejects a field number above 2^29 - 1', () =>
    expectMalformed(() => decodeFields(h('f8ffffff1f01'), 'm'), 'out of range'));
  it('rejects start-group and end-group wire types', () => {
    expectMalformed(() => decodeFields(h('0b'), 'm'), 'unsupported wire type 3');
    expectMalformed(() => decodeFields(h('0c'), 'm'), 'unsupported wire type 4');
  });
  it('rejects wire types 6 and 7', () =>
    expectMalformed(() => decodeFields(h('0e'), 'm'), 'unsupported wire type 6'));
  it('rejects a length running past the end', () =>
    expectMalformed(() => decodeFields(h('0a0501'), 'm'), 'declares 5 bytes'));
  it('rejects a huge declared length without allocating it', () =>
    expectMalformed(() => decodeFields(h('0affffffffffffffff7f'), 'm'), 'declares'));
  it('rejects truncated fixed64 and fixed32 values', () => {
    expectMalformed(() => decodeFields(h('0901020304'), 'm'), 'truncated');
    expectMalformed(() => decodeFields(h('0d0102'), 'm'), 'truncated');
  });
  it('rejects fields out of number order', () =>
    expectMalformed(() => decodeFields(h('10010801'), 'm'), 'field 1 at offset 2 follows field 2'));
  it('accepts a repeated field number in a row (repeated fields)', () =>
    expect(decodeFields(h('0a000a00'), 'm')).toHaveLength(2));
  it('names the message in the error', () =>
    expectMalformed(() => decodeFields(h('08'), 'raw_data.contract[0]'), 'raw_data.contract[0]: varint'));
});
