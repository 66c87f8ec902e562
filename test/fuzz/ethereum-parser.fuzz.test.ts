/**
 * Fuzzing the Ethereum unsigned-transaction parser (RLP, legacy and typed envelopes) under
 * fast-check with a fixed seed: any bytes are either refused with a CountersignError or parsed,
 * and what is parsed re-serializes to the very same bytes (no two encodings of one transaction).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseUnsignedTransaction, serializeUnsignedTransaction } from '../../chains/ethereum/index.js';
import { isCountersignError } from '../../src/shared/errors.js';

const SEED = 0x5eed16;

function check(bytes: Uint8Array): void {
  let tx;
  try {
    tx = parseUnsignedTransaction(bytes);
  } catch (e) {
    expect(isCountersignError(e), String(e)).toBe(true);
    return;
  }
  expect(Buffer.from(serializeUnsignedTransaction(tx)).toString('hex')).toBe(
    Buffer.from(bytes).toString('hex'),
  );
}

/** An RLP list header for `n` payload bytes, so the fuzzer reaches past the outer framing. */
const listHeader = (n: number): number[] =>
  n < 56 ? [0xc0 + n] : n < 256 ? [0xf8, n] : [0xf9, n >> 8, n & 0xff];

describe('Ethereum unsigned-transaction parser fuzz', () => {
  it('refuses or round-trips arbitrary bytes and framed typed envelopes', () => {
    const framed = fc
      .tuple(fc.constantFrom(null, 0x01, 0x02, 0x03, 0x04), fc.uint8Array({ maxLength: 300 }))
      .map(([type, body]) => {
        const list = [...listHeader(body.length), ...body];
        return Uint8Array.from(type === null ? list : [type, ...list]);
      });
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), framed), check), {
      seed: SEED,
      numRuns: 5000,
    });
  });
});
