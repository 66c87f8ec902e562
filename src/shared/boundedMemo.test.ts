import { describe, expect, it } from 'vitest';
import { BoundedMemo } from './boundedMemo.js';

describe('BoundedMemo', () => {
  it('returns what was set and undefined for what was not', () => {
    const m = new BoundedMemo<string, number>(4);
    m.set('a', 1);
    expect(m.get('a')).toBe(1);
    expect(m.get('b')).toBeUndefined();
  });

  it('never holds more than its limit, dropping the oldest entry first', () => {
    const m = new BoundedMemo<number, number>(3);
    for (let i = 0; i < 10; i++) {
      m.set(i, i * i);
      expect(m.size).toBeLessThanOrEqual(3);
    }
    expect(m.size).toBe(3);
    expect([m.get(6), m.get(7), m.get(8), m.get(9)]).toEqual([undefined, 49, 64, 81]);
  });

  it('overwrites a key it holds without dropping another', () => {
    const m = new BoundedMemo<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.set('a', 3);
    expect([m.size, m.get('a'), m.get('b')]).toEqual([2, 3, 2]);
  });

  it('through: computes a missing value once and answers it from then on; a throw remembers nothing', () => {
    const m = new BoundedMemo<string, number>(4);
    let calls = 0;
    const compute = () => ++calls * 10;
    expect([m.through('a', compute), m.through('a', compute), calls]).toEqual([10, 10, 1]);
    expect(() =>
      m.through('b', () => {
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect([m.get('b'), m.through('b', compute), calls]).toEqual([undefined, 20, 2]);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new BoundedMemo(0)).toThrow(RangeError);
    expect(() => new BoundedMemo(1.5)).toThrow(RangeError);
  });
});
