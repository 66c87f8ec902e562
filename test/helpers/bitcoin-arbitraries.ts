/** fast-check arbitraries of the Bitcoin transaction model, for the property tests in chains/bitcoin. */
import fc from 'fast-check';
import type { BitcoinTransaction } from '../../chains/bitcoin/types.js';

/** Output scripts of up to `maxLength` bytes, or of 250–300 (a three-byte compactSize) when `long`. */
export function scriptArb(long = false): fc.Arbitrary<Uint8Array> {
  const short = fc.uint8Array({ maxLength: 40 });
  return long ? fc.oneof(short, fc.uint8Array({ minLength: 250, maxLength: 300 })) : short;
}

/** Unsigned transactions (no scriptSig, no witness) with a few inputs and outputs. */
export function unsignedTxArb(
  o: { maxInputs?: number; maxOutputs?: number; longScripts?: boolean } = {},
): fc.Arbitrary<BitcoinTransaction> {
  return fc.record({
    version: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    inputs: fc.array(
      fc.record({
        prevTxid: fc.uint8Array({ minLength: 32, maxLength: 32 }),
        vout: fc.nat({ max: 0xffffffff }),
        scriptSig: fc.constant(new Uint8Array(0)),
        sequence: fc.nat({ max: 0xffffffff }),
        witness: fc.constant([] as Uint8Array[]),
      }),
      { minLength: 1, maxLength: o.maxInputs ?? 3 },
    ),
    outputs: fc.array(
      fc.record({
        value: fc.bigInt({ min: 0n, max: 2_100_000_000_000_000n }),
        script: scriptArb(o.longScripts),
      }),
      { maxLength: o.maxOutputs ?? 3 },
    ),
    locktime: fc.nat({ max: 0xffffffff }),
  });
}
