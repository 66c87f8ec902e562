import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter } from './bytes.js';

/** What DataView writes for the same values (the writer's former implementation). */
function viaDataView(set: (d: DataView) => void, size: number): Uint8Array {
  const b = new Uint8Array(size);
  set(new DataView(b.buffer));
  return b;
}

describe('ByteWriter integers', () => {
  it('u32, i32 and u64 are the little-endian bytes DataView writes, at the edges and at random', () => {
    const u32s = [0, 1, 0xff, 0x100, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
    const i32s = [0, 1, -1, -(2 ** 31), 2 ** 31 - 1, -256];
    const u64s = [0n, 1n, 0xffffffffn, 0x100000000n, 2_100_000_000_000_000n, 2n ** 64n - 1n];
    const check = (u: number, i: number, q: bigint) => {
      expect(new ByteWriter().u32(u).finish()).toEqual(viaDataView((d) => d.setUint32(0, u, true), 4));
      expect(new ByteWriter().i32(i).finish()).toEqual(viaDataView((d) => d.setInt32(0, i, true), 4));
      expect(new ByteWriter().u64(q).finish()).toEqual(
        viaDataView((d) => d.setBigUint64(0, BigInt.asUintN(64, q), true), 8),
      );
    };
    for (let k = 0; k < u64s.length; k++) check(u32s[k] as number, i32s[k] ?? 0, u64s[k] as bigint);
    fc.assert(
      fc.property(
        fc.nat({ max: 0xffffffff }),
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        check,
      ),
    );
  });

  it('what it writes, ByteReader reads back', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 0xffffffff }),
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        (u, i, q) => {
          const r = new ByteReader(new ByteWriter().u32(u).i32(i).u64(q).finish(), 'x');
          expect([r.u32('u'), r.i32('i'), r.u64('q')]).toEqual([u, i, q]);
          r.end();
        },
      ),
    );
  });
});
