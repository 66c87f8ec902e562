/** fast-check generators of structurally valid Solana messages (legacy and v0). */
import fc from 'fast-check';
import type { SolanaMessage } from '../../../chains/solana/index.js';

const key = fc.uint8Array({ minLength: 32, maxLength: 32 });

/** A valid message: distinct keys, consistent header, in-range indexes, programs static and not the payer. */
export const validMessage: fc.Arbitrary<SolanaMessage> = fc
  .record({
    v0: fc.boolean(),
    keyCount: fc.integer({ min: 2, max: 12 }),
    lookupShape: fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })), { maxLength: 3 }),
  })
  .chain(({ v0, keyCount, lookupShape }) => {
    const shape = v0 ? lookupShape.filter(([w, r]) => w + r > 0) : [];
    const loaded = shape.reduce((n, [w, r]) => n + w + r, 0);
    const total = keyCount + loaded;
    return fc.record({
      version: fc.constant(v0 ? (0 as const) : ('legacy' as const)),
      header: fc.integer({ min: 1, max: keyCount }).chain((required) =>
        fc.record({
          numRequiredSignatures: fc.constant(required),
          numReadonlySignedAccounts: fc.integer({ min: 0, max: required - 1 }),
          numReadonlyUnsignedAccounts: fc.integer({ min: 0, max: keyCount - required }),
        }),
      ),
      staticAccountKeys: fc.uniqueArray(key, {
        minLength: keyCount,
        maxLength: keyCount,
        selector: (k) => Buffer.from(k).toString('hex'),
      }),
      recentBlockhash: key,
      instructions: fc.array(
        fc.record({
          programIdIndex: fc.integer({ min: 1, max: keyCount - 1 }),
          accountIndexes: fc.array(fc.integer({ min: 0, max: total - 1 }), { maxLength: 6 }),
          data: fc.uint8Array({ maxLength: 40 }),
        }),
        { maxLength: 4 },
      ),
      addressTableLookups: fc.tuple(
        ...shape.map(([w, r]) =>
          fc.record({
            accountKey: key,
            writableIndexes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: w, maxLength: w }),
            readonlyIndexes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: r, maxLength: r }),
          }),
        ),
      ),
    });
  });
