import { describe, expect, it } from 'vitest';
import { UUID_V7 as V7 } from '../../test/helpers/ids.js';
import { uuidv7 } from './ids.js';

describe('uuidv7', () => {
  it('puts the 48-bit big-endian millisecond timestamp first (RFC 9562 section 5.7)', () => {
    // RFC 9562 appendix A.6's timestamp: 0x017F22E279B0 = 1645557742000 ms.
    const id = uuidv7(1645557742000);
    expect(id.slice(0, 13)).toBe('017f22e2-79b0');
    expect(id).toMatch(V7);
    // The largest 48-bit value and zero.
    expect(uuidv7(2 ** 48 - 1).slice(0, 13)).toBe('ffffffff-ffff');
    expect(uuidv7(0).slice(0, 13)).toBe('00000000-0000');
  });

  it('sets version 7 and the RFC variant, and draws fresh random bits for every id', () => {
    const ids = new Set<string>();
    // Several refills of the random block.
    for (let i = 0; i < 5000; i++) {
      const id = uuidv7(1_700_000_000_000);
      expect(id).toMatch(V7);
      ids.add(id);
    }
    expect(ids.size).toBe(5000);
  });

  it('takes every random digit from the random block: each position takes all 16 values, the variant all 4', () => {
    // A position stuck at one value (a byte taken twice, a digit never filled) would show here.
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 5000; i++) {
      const id = uuidv7(1_700_000_000_000 + (i % 3));
      for (let k = 0; k < 36; k++) seen[k]?.add(id[k] as string);
    }
    for (let k = 14; k < 36; k++) {
      if (k === 18 || k === 23) expect(seen[k]).toEqual(new Set(['-']));
      else if (k === 14) expect(seen[k]).toEqual(new Set(['7']));
      else if (k === 19) expect(seen[k]).toEqual(new Set(['8', '9', 'a', 'b']));
      else expect(seen[k]?.size, `digit ${k}`).toBe(16);
    }
  });

  it('never hands out a random byte twice: no random digit copies another of its id or of the next id', () => {
    const RANDOM = [15, 16, 17, 20, 21, 22, ...Array.from({ length: 12 }, (_, i) => 24 + i)];
    const ids = Array.from({ length: 3000 }, () => uuidv7(1_700_000_000_000));
    for (const a of RANDOM) {
      for (const b of RANDOM) {
        // Two independent random digits agree about 1 time in 16; a reused byte agrees every time.
        const within = a === b ? 0 : ids.filter((id) => id[a] === id[b]).length;
        const across = ids.slice(1).filter((id, i) => id[a] === ids[i]?.[b]).length;
        expect(within, `digits ${a} and ${b}`).toBeLessThan(ids.length / 4);
        expect(across, `digit ${a} and the previous id's ${b}`).toBeLessThan(ids.length / 4);
      }
    }
  });

  it('keeps each millisecond its own timestamp when calls alternate between them', () => {
    expect(uuidv7(1645557742000).slice(0, 14)).toBe('017f22e2-79b0-');
    expect(uuidv7(1645557742001).slice(0, 14)).toBe('017f22e2-79b1-');
    expect(uuidv7(1645557742000).slice(0, 14)).toBe('017f22e2-79b0-');
  });

  it('sorts by creation time', () => {
    const a = uuidv7(1_700_000_000_000);
    const b = uuidv7(1_700_000_000_001);
    const c = uuidv7(1_800_000_000_000);
    expect([c, a, b].sort()).toEqual([a, b, c]);
  });
});
