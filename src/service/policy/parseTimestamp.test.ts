import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './parseTimestamp.js';

describe('parseTimestamp', () => {
  it.each([
    ['1970-01-01T00:00:00Z', 0n],
    ['1970-01-01T00:00:00.000000001Z', 1n],
    ['2024-02-29T23:59:59.5Z', BigInt(Date.parse('2024-02-29T23:59:59.5Z')) * 1_000_000n],
    ['1969-12-31T23:59:59Z', -1_000_000_000n],
    ['0000-01-01T00:00:00Z', -62167219200n * 1_000_000_000n],
  ])('reads %s', (text, nanos) => {
    expect(parseTimestamp(text)).toEqual({ nanos });
  });

  it.each([
    '2026-03-01',
    '2026-03-01T00:00:00',
    '2026-03-01T00:00:00+00:00',
    '2026-03-01t00:00:00z',
    '2026-03-01T00:00:60Z',
    '2026-04-31T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-03-01T00:00:00.1234567890Z',
    ' 2026-03-01T00:00:00Z',
  ])('rejects %s', (text) => {
    expect(parseTimestamp(text)).toHaveProperty('error');
  });

  it('agrees with Date.parse on any millisecond instant toISOString writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), (ms) => {
        expect(parseTimestamp(new Date(ms).toISOString())).toEqual({ nanos: BigInt(ms) * 1_000_000n });
      }),
    );
  });
});
