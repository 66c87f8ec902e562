import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { hex, toHex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';

function expectMalformed(fn: () => unknown, message: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe('TRON_MALFORMED_TRANSACTION');
  expect((err as CountersignError).message).toContain(message);
}

const v = transactionVectors.transactions[0]!;
// raw_data is 133 bytes: tag 0x0a, length varint 0x85 0x01.
const rawField = `0a8501${v.rawDataHex}`;
const sigField = `1241${v.signature.toLowerCase()}`;

describe('parseSignedTransaction', () => {
  it("splits tronweb's signed transaction into the exact raw_data and its signature", () => {
    const parsed = parseSignedTransaction(hex(v.signedHex));
    expect(toHex(parsed.rawData)).toBe(v.rawDataHex);
    expect(parsed.signatures.map(toHex)).toEqual([v.signature.toLowerCase()]);
    expect(parsed.tx.contract[0]?.type.name).toBe('TransferContract');
  });

  it('builds the same bytes by hand (sanity of the fixtures below)', () => {
    expect(v.rawDataHex.length / 2).toBe(133);
    expect(`${rawField}${sigField}`).toBe(v.signedHex.toLowerCase());
  });

  it('keeps several signatures (multi-sig) in order', () => {
    const parsed = parseSignedTransaction(hex(`${rawField}${sigField}${sigField}`));
    expect(parsed.signatures).toHaveLength(2);
  });

  it('rejects a transaction without signature', () =>
    expectMalformed(() => parseSignedTransaction(hex(rawField)), 'signature: the transaction is not signed'));
  it('rejects one without raw_data', () =>
    expectMalformed(() => parseSignedTransaction(hex(sigField)), 'raw_data: is required'));
  it('rejects raw_data twice', () =>
    expectMalformed(
      () => parseSignedTransaction(hex(`${rawField}${rawField}${sigField}`)),
      'raw_data: appears more than once',
    ));
  it('rejects a 64-byte signature', () =>
    expectMalformed(
      () => parseSignedTransaction(hex(`${rawField}1240${v.signature.slice(0, 128)}`)),
      'signature[0]: must be 65 bytes, got 64',
    ));
  it('rejects a ret field (only nodes fill it in)', () =>
    expectMalformed(
      () => parseSignedTransaction(hex(`${rawField}${sigField}2a00`)),
      'field 5 is not accepted',
    ));
  it('rejects trailing bytes', () => {
    expectMalformed(() => parseSignedTransaction(hex(`${v.signedHex}00`)), 'out of range');
    expectMalformed(() => parseSignedTransaction(hex(`${v.signedHex}12`)), 'truncated');
  });
  it('rejects a truncated transaction', () =>
    expectMalformed(() => parseSignedTransaction(hex(v.signedHex.slice(0, -2))), 'declares 65 bytes'));
  it('rejects signature before raw_data (not canonical)', () =>
    expectMalformed(() => parseSignedTransaction(hex(`${sigField}${rawField}`)), 'number order'));
  it('rejects a malformed raw_data inside', () =>
    expectMalformed(
      () => parseSignedTransaction(hex(`0a0100${sigField}`)),
      'failed to pre-parse Tron transaction',
    ));

  it('never throws anything but CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseSignedTransaction(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
