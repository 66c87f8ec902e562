import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { fromRlp, toRlp, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { decodeRlp, decodeUint, encodeRlp, uintToBytes, type RlpInput, type RlpItem } from './rlp.js';

const h = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const hx = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function toHexTree(item: RlpItem): unknown {
  return item instanceof Uint8Array ? `0x${hx(item)}` : item.map(toHexTree);
}

function expectMalformed(fn: () => unknown, message: string): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CountersignError);
    expect((e as CountersignError).code).toBe('ETHEREUM_MALFORMED_TRANSACTION');
    expect((e as CountersignError).message).toMatch(/^failed to pre-parse Ethereum transaction: rlp: /);
    expect((e as CountersignError).message).toContain(message);
    return;
  }
  expect.fail('expected a malformed-RLP error');
}

const rlpInput: fc.Arbitrary<RlpInput> = fc.letrec<{ item: RlpInput }>((tie) => ({
  item: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.uint8Array({ maxLength: 80 }),
    fc.array(tie('item'), { maxLength: 5 }),
  ),
})).item;

describe('encodeRlp', () => {
  it.each([
    ['empty string', new Uint8Array(0), '80'],
    ['single byte below 0x80 as itself', h('7f'), '7f'],
    ['byte 0x80 as a one-byte string', h('80'), '8180'],
    ['55-byte string in the short form', new Uint8Array(55).fill(1), `b7${'01'.repeat(55)}`],
    ['56-byte string in the long form', new Uint8Array(56).fill(1), `b838${'01'.repeat(56)}`],
    ['empty list', [], 'c0'],
    ['nested lists (set-theoretic 3)', [[], [[]], [[], [[]]]], 'c7c0c1c0c3c0c1c0'],
    ["'cat','dog'", [h('636174'), h('646f67')], 'c88363617483646f67'],
  ] as const)('encodes %s', (_name, input, expected) => {
    expect(hx(encodeRlp(input as RlpInput))).toBe(expected);
  });

  it('encodes a 1024-byte string with a two-byte length', () => {
    expect(hx(encodeRlp(new Uint8Array(1024))).slice(0, 6)).toBe('b90400');
  });

  it('prepends an EIP-2718 type byte in the same buffer', () => {
    expect(hx(encodeRlp([h('01')], 0x02))).toBe('02c101');
  });

  it('matches viem toRlp on random trees', () => {
    const toViem = (i: RlpInput): unknown => (i instanceof Uint8Array ? `0x${hx(i)}` : i.map(toViem));
    fc.assert(
      fc.property(rlpInput, (input) => {
        expect(`0x${hx(encodeRlp(input))}`).toBe(toRlp(toViem(input) as Hex[]));
      }),
    );
  });
});

describe('decodeRlp', () => {
  it('round-trips decode(encode(x)) on random trees', () => {
    fc.assert(
      fc.property(rlpInput, (input) => {
        const encoded = encodeRlp(input);
        const decoded = decodeRlp(encoded);
        expect(toHexTree(decoded)).toEqual(toHexTree(input as RlpItem));
        expect(hx(encodeRlp(decoded))).toBe(hx(encoded));
      }),
    );
  });

  it('agrees with viem fromRlp on canonical encodings', () => {
    fc.assert(
      fc.property(rlpInput, (input) => {
        const encoded = encodeRlp(input);
        expect(toHexTree(decodeRlp(encoded))).toEqual(fromRlp(`0x${hx(encoded)}`, 'hex'));
      }),
    );
  });

  it('never throws anything but CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          decodeRlp(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('accepts exactly the canonical encoding: any byte string it accepts re-encodes to itself', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        let item: RlpItem;
        try {
          item = decodeRlp(bytes);
        } catch {
          return;
        }
        expect(hx(encodeRlp(item))).toBe(hx(bytes));
      }),
      { numRuns: 5000 },
    );
  });

  it('rejects empty input', () => expectMalformed(() => decodeRlp(new Uint8Array(0)), 'empty'));
  it('rejects trailing bytes', () => expectMalformed(() => decodeRlp(h('c000')), 'trailing'));
  it('rejects a single byte below 0x80 wrapped as a string', () =>
    expectMalformed(() => decodeRlp(h('8105')), 'wrapped'));
  it('accepts a single byte 0x80 wrapped as a string', () =>
    expect(hx(decodeRlp(h('8180')) as Uint8Array)).toBe('80'));
  it('rejects a long-form string length below 56', () =>
    expectMalformed(() => decodeRlp(h(`b837${'00'.repeat(55)}`)), 'short form'));
  it('rejects a long-form list length below 56', () =>
    expectMalformed(() => decodeRlp(h('f80180')), 'short form'));
  it('rejects a leading zero in a long-form length', () =>
    expectMalformed(() => decodeRlp(h(`b90038${'00'.repeat(56)}`)), 'leading zero'));
  it('rejects a truncated string', () => expectMalformed(() => decodeRlp(h('83aabb')), 'truncated'));
  it('rejects a truncated long length', () => expectMalformed(() => decodeRlp(h('b9')), 'truncated'));
  it('rejects a list whose declared length exceeds the input', () =>
    expectMalformed(() => decodeRlp(h('c3c0')), 'truncated'));
  it('rejects a list item overrunning its list', () =>
    expectMalformed(() => decodeRlp(h('c2820000')), 'truncated'));
  it('rejects a huge declared length without allocating it', () =>
    expectMalformed(() => decodeRlp(h('bfffffffffffffffff')), 'truncated'));
  it('rejects lists nested deeper than 16', () =>
    expectMalformed(
      () => decodeRlp(encodeRlp(Array.from({ length: 20 }).reduce<RlpInput>((a) => [a], []))),
      'nested',
    ));
});

describe('RLP integers', () => {
  it.each([
    [0n, ''],
    [1n, '01'],
    [0x7fn, '7f'],
    [0x100n, '0100'],
    [0xffffffffffffn, 'ffffffffffff'],
    [0x1000000000000n, '01000000000000'],
    [(1n << 256n) - 1n, 'ff'.repeat(32)],
  ])('encodes %s minimally', (n, expected) => {
    expect(hx(uintToBytes(n))).toBe(expected);
    expect(decodeUint(uintToBytes(n), 'x')).toBe(n);
  });

  it('round-trips random uint256 values', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }), (n) => {
        expect(decodeUint(uintToBytes(n), 'x')).toBe(n);
      }),
    );
  });

  it('rejects a leading zero byte and names the field', () => {
    expect(() => decodeUint(h('0001'), 'nonce')).toThrow(
      'failed to pre-parse Ethereum transaction: nonce: integer has a leading zero byte',
    );
  });

  it('rejects a lone zero byte (zero is the empty string)', () => {
    expect(() => decodeUint(h('00'), 'value')).toThrow('value: integer has a leading zero byte');
  });

  it('rejects integers wider than the bound', () => {
    expect(() => decodeUint(h('01'.repeat(9)), 'nonce', 8)).toThrow('nonce: integer is wider than 64 bits');
  });

  it('rejects a list where an integer is expected', () => {
    expect(() => decodeUint([], 'gas_limit')).toThrow('gas_limit: expected an integer, got a list');
  });
});

/** ethereum/tests RLPTests at 4c87ebbf02 (MIT, Copyright 2014 Ethereum Foundation), copied unchanged. */
describe('ethereum/tests RLPTests', () => {
  type In = string | number | In[];
  const load = (name: string) =>
    JSON.parse(
      readFileSync(new URL(`../../test/vectors/ethereum/rlp/${name}`, import.meta.url), 'utf8'),
    ) as Record<string, { in: In; out: string }>;
  /** The suite's input notation: a string's bytes, an integer (`#` for a big one) in minimal bytes. */
  function toInput(v: In): RlpInput {
    if (Array.isArray(v)) return v.map(toInput);
    if (typeof v === 'number') return uintToBytes(BigInt(v));
    if (v.startsWith('#')) return uintToBytes(BigInt(v.slice(1)));
    return new Uint8Array(Buffer.from(v, 'utf8'));
  }
  const valid = Object.entries(load('rlptest.json'));
  const invalid = Object.entries(load('invalidRLPTest.json'));

  it('holds both files', () => {
    expect(valid.length).toBeGreaterThanOrEqual(28);
    expect(invalid.length).toBeGreaterThanOrEqual(26);
  });

  it.each(valid)('encodes and decodes %s', (_, { in: input, out }) => {
    const tree = toInput(input);
    expect(`0x${hx(encodeRlp(tree))}`).toBe(out);
    expect(toHexTree(decodeRlp(h(out.slice(2))))).toEqual(toHexTree(tree as RlpItem));
  });

  // Two of the invalid cases write their bytes without the 0x.
  it.each(invalid)('refuses %s', (_, { out }) => {
    expect(() => decodeRlp(h(out.replace(/^0x/, '')))).toThrow(CountersignError);
  });
});
