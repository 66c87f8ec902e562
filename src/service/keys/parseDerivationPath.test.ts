import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { parseDerivationPath } from './index.js';

const H = 0x80000000;

describe('parseDerivationPath', () => {
  it('parses hardened and normal segments', () => {
    expect(parseDerivationPath("m/44'/60'/0'/0/0", 'f')).toEqual([44 + H, 60 + H, H, 0, 0]);
    expect(parseDerivationPath('m/0H/1/2h/2/1000000000', 'f')).toEqual([H, 1, 2 + H, 2, 1000000000]);
    expect(parseDerivationPath('m', 'f')).toEqual([]);
    expect(parseDerivationPath("m/2147483647'", 'f')).toEqual([0xffffffff]);
  });

  it.each([
    ['', 'must start with "m"'],
    ['M/0', 'must start with "m"'],
    ['/0', 'must start with "m"'],
    ["44'/60'", 'must start with "m"'],
    ['m/', 'segment 1'],
    ['m//0', 'segment 1'],
    ['m/0/', 'segment 2'],
    ['m/01', 'segment 1'],
    ['m/-1', 'segment 1'],
    ['m/1.5', 'segment 1'],
    ['m/ 1', 'segment 1'],
    ["m/1''", 'segment 1'],
    ['m/1x', 'segment 1'],
    ['m/2147483648', 'below 2^31'],
    ["m/2147483648'", 'below 2^31'],
    ['m/99999999999999999999', 'below 2^31'],
  ])('rejects %j naming the field', (path, reason) => {
    try {
      parseDerivationPath(path, 'parameters.accounts[0].path');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CountersignError);
      expect((e as CountersignError).code).toBe('FIELD_INVALID');
      expect((e as CountersignError).field).toBe('parameters.accounts[0].path');
      expect((e as CountersignError).message).toContain(reason);
    }
  });

  it('rejects more than 255 segments', () => {
    expect(() => parseDerivationPath(`m${'/0'.repeat(256)}`, 'f')).toThrow(/at most 255/);
    expect(parseDerivationPath(`m${'/0'.repeat(255)}`, 'f')).toHaveLength(255);
  });

  it('round-trips any index list written with any hardened marker', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: H - 1 }), fc.constantFrom('', "'", 'h', 'H')), {
          maxLength: 12,
        }),
        (segs) => {
          const path = ['m', ...segs.map(([i, mark]) => `${i}${mark}`)].join('/');
          expect(parseDerivationPath(path, 'f')).toEqual(segs.map(([i, mark]) => (mark === '' ? i : i + H)));
        },
      ),
    );
  });

  it('throws nothing but FIELD_INVALID on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `m/${s}`),
        ),
        (s) => {
          try {
            parseDerivationPath(s, 'f');
          } catch (e) {
            expect(e).toBeInstanceOf(CountersignError);
            expect((e as CountersignError).code).toBe('FIELD_INVALID');
          }
        },
      ),
    );
  });
});
