import { describe, expect, it } from 'vitest';
import { uuidv7 } from './ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

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

  it('sorts by creation time', () => {
    const a = uuidv7(1_700_000_000_000);
    const b = uuidv7(1_700_000_000_001);
    const c = uuidv7(1_800_000_000_000);
    expect([c, a, b].sort()).toEqual([a, b, c]);
  });
});
