import { describe, expect, it } from 'vitest';
import { optNumber } from './params.js';

const read = (v: unknown) => optNumber({ n: v }, 'n', 'parameters');
const refusal = (v: unknown): string => {
  try {
    read(v);
  } catch (e) {
    expect((e as { field?: string }).field).toBe('parameters.n');
    return (e as Error).message;
  }
  throw new Error(`${JSON.stringify(v)} was accepted`);
};

describe('optNumber', () => {
  it('reads an integer given as a number or a decimal string, and nothing when absent', () => {
    expect(read(7)).toBe(7);
    expect(read(-3)).toBe(-3);
    expect(read('42')).toBe(42);
    expect(read(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(read(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(read(undefined)).toBeUndefined();
    expect(read(null)).toBeUndefined();
  });

  it('refuses an integer too large to hold exactly, as a number or as digits (no Infinity, no rounding)', () => {
    for (const v of [2 ** 53, 1e300, '9007199254740993', '9'.repeat(400)])
      expect(refusal(v)).toMatch(/must be an integer of at most 2\^53 - 1 in size/);
  });

  it('refuses what is not an integer', () => {
    for (const v of [1.5, NaN, Infinity, '', ' 1', '-1', '0x10', '1e3', true, {}, []])
      expect(refusal(v)).toMatch(/must be an integer$/);
  });
});
