import fc from 'fast-check';
import { TxEnvelopeTempo } from 'ox/tempo';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { hex, invalidVectors, oxVectors, to0x } from '../../test/vectors/tempo/vectors.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';

const unsigned = oxVectors.filter((v) => v.kind === 'unsigned');
const refused = oxVectors.filter((v) => v.kind === 'unsupported' || v.kind === 'invalid');

function thrown(run: () => unknown): CountersignError {
  try {
    run();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe.each(unsigned)('parseUnsignedTransaction on ox vector "$name"', (v) => {
  it('re-serializes byte-identically', () => {
    expect(to0x(serializeUnsignedTransaction(parseUnsignedTransaction(hex(v.hex))))).toBe(v.hex);
  });

  it('reads the same fields as ox', () => {
    const tx = parseUnsignedTransaction(hex(v.hex));
    const ox = TxEnvelopeTempo.deserialize(v.hex as TxEnvelopeTempo.Serialized);
    expect(tx.chainId).toBe(BigInt(ox.chainId));
    expect(tx.nonce).toBe(ox.nonce ?? 0n);
    expect(tx.nonceKey).toBe(ox.nonceKey ?? 0n);
    expect(tx.gasLimit).toBe(ox.gas ?? 0n);
    expect(tx.maxFeePerGas).toBe(ox.maxFeePerGas ?? 0n);
    expect(tx.validBefore).toBe(ox.validBefore === undefined ? null : BigInt(ox.validBefore));
    expect(tx.validAfter).toBe(ox.validAfter === undefined ? null : BigInt(ox.validAfter));
    expect(tx.sponsored).toBe(ox.feePayerSignature === null);
    expect(tx.calls.map((c) => ({ to: c.to && to0x(c.to), value: c.value, data: to0x(c.data) }))).toEqual(
      ox.calls.map((c) => ({ to: c.to ?? null, value: c.value ?? 0n, data: c.data ?? '0x' })),
    );
  });
});

describe.each(refused)('parseUnsignedTransaction refuses ox vector "$name"', (v) => {
  it(`names ${v.field}`, () => {
    const e = thrown(() => parseUnsignedTransaction(hex(v.hex)));
    expect(e.code).toBe(
      v.kind === 'unsupported' ? 'TEMPO_UNSUPPORTED_FEATURE' : 'TEMPO_MALFORMED_TRANSACTION',
    );
    expect(e.message).toMatch(
      new RegExp(`^failed to pre-parse Tempo transaction: ${v.field!.replace(/[[\]]/g, '\\$&')}`),
    );
  });
});

describe.each(invalidVectors)('parseUnsignedTransaction rejects $name', (v) => {
  it(`with ${v.code}`, () => {
    const e = thrown(() => parseUnsignedTransaction(hex(v.hex)));
    expect(e.code).toBe(v.code);
    expect(e.message).toContain(v.message);
  });
});

describe('parseUnsignedTransaction', () => {
  it('refuses the signed ox vector', () => {
    const v = oxVectors.find((x) => x.kind === 'signed')!;
    expect(() => parseUnsignedTransaction(hex(v.hex))).toThrow('already carries a signature');
  });

  it('round-trips every valid transaction (a sponsored one without its fee token)', () => {
    fc.assert(
      fc.property(arbitraryTransaction(false), (tx) => {
        const parsed = parseUnsignedTransaction(serializeUnsignedTransaction(tx));
        expect(parsed).toEqual(tx.sponsored ? { ...tx, feeToken: null } : tx);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws anything but CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, typed) => {
        const input = typed ? Uint8Array.of(0x76, ...bytes) : bytes;
        try {
          parseUnsignedTransaction(input);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws anything but CountersignError on mutated valid transactions', () => {
    fc.assert(
      fc.property(
        arbitraryTransaction(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: -3, max: 3 }),
        (tx, edits, resize) => {
          const bytes = serializeUnsignedTransaction(tx);
          let mutated = bytes.slice();
          for (const [at, value] of edits) mutated[at % mutated.length] = value;
          if (resize < 0) mutated = mutated.subarray(0, Math.max(0, mutated.length + resize));
          else if (resize > 0) mutated = Uint8Array.of(...mutated, ...new Uint8Array(resize));
          try {
            const parsed = parseUnsignedTransaction(mutated);
            // Whatever parses is canonical: it serializes back to the same bytes.
            expect(to0x(serializeUnsignedTransaction(parsed))).toBe(to0x(mutated));
          } catch (e) {
            expect(e).toBeInstanceOf(CountersignError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
