import fc from 'fast-check';
import { serializeTransaction } from 'viem';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { arbitraryTransaction, fieldsOf } from '../../test/vectors/ethereum/arbitraries.js';
import {
  hex,
  invalidVectors,
  to0x,
  toViem,
  transactionVectors,
} from '../../test/vectors/ethereum/vectors.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { transactionFromFields } from './transactionFromFields.js';

function onlyCountersignErrors(bytes: Uint8Array): void {
  try {
    const tx = parseUnsignedTransaction(bytes);
    // Whatever parses must be canonical: it re-serializes to exactly the input.
    expect(to0x(serializeUnsignedTransaction(tx))).toBe(to0x(bytes));
  } catch (e) {
    if (!(e instanceof CountersignError)) throw e;
  }
}

describe('parseUnsignedTransaction rejects bad input', () => {
  it.each(invalidVectors.unsigned)('$name → $code', ({ hex: h, code, message }) => {
    let err: unknown;
    try {
      parseUnsignedTransaction(hex(h));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe(code);
    if (code === 'ETHEREUM_MALFORMED_TRANSACTION') {
      expect((err as CountersignError).message).toMatch(
        /^failed to pre-parse Ethereum transaction: [\w[\].]+: /,
      );
    }
    if (message !== undefined) expect((err as CountersignError).message).toContain(message);
  });
});

describe('parseUnsignedTransaction properties', () => {
  it('random valid transactions: serialize equals viem, parse ∘ serialize round-trips', () => {
    fc.assert(
      fc.property(arbitraryTransaction, (tx) => {
        const bytes = serializeUnsignedTransaction(tx);
        expect(to0x(bytes)).toBe(serializeTransaction(toViem(tx)));
        expect(parseUnsignedTransaction(bytes)).toEqual(tx);
      }),
      { numRuns: 500 },
    );
  });

  it('random valid transactions round-trip through the structured gRPC fields', () => {
    fc.assert(
      fc.property(arbitraryTransaction, (tx) => {
        expect(transactionFromFields(fieldsOf(tx))).toEqual(tx);
      }),
      { numRuns: 500 },
    );
  });

  it('random bytes never throw anything but CountersignError', () => {
    const prefixed = fc.tuple(
      fc.constantFrom(0x01, 0x02, 0x03, 0x04, 0xc0, 0xf8),
      fc.uint8Array({ maxLength: 150 }),
    );
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), onlyCountersignErrors), { numRuns: 3000 });
    fc.assert(
      fc.property(prefixed, ([p, rest]) => onlyCountersignErrors(Uint8Array.of(p, ...rest))),
      { numRuns: 3000 },
    );
  });

  it('single-byte mutations of valid transactions never throw anything but CountersignError', () => {
    const samples = transactionVectors.transactions.map((v) => hex(v.unsigned));
    fc.assert(
      fc.property(
        fc.constantFrom(...samples),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom('replace', 'insert', 'delete'),
        (sample, at, byte, op) => {
          const i = at % sample.length;
          const b = Array.from(sample);
          if (op === 'replace') b[i] = byte;
          else if (op === 'insert') b.splice(i, 0, byte);
          else b.splice(i, 1);
          onlyCountersignErrors(Uint8Array.from(b));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('parseUnsignedTransaction accepts', () => {
  it('the EIP-155 form [..., chainId, 0, 0] and reads the chain id from the v slot', () => {
    const tx = parseUnsignedTransaction(hex(transactionVectors.transactions[1]!.unsigned));
    expect(tx.type).toBe('legacy');
    expect(tx.chainId).toBe(11155111n);
  });

  it('the pre-EIP-155 6-field form with no chain id', () => {
    const tx = parseUnsignedTransaction(hex(transactionVectors.transactions[2]!.unsigned));
    expect(tx.chainId).toBeUndefined();
    expect(tx.to).toBeNull();
  });

  it('does not alias the input buffer', () => {
    const bytes = hex(transactionVectors.transactions[4]!.unsigned);
    const tx = parseUnsignedTransaction(bytes);
    const before = to0x(tx.to!);
    bytes.fill(0);
    expect(to0x(tx.to!)).toBe(before);
  });
});
