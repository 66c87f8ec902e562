import fc from 'fast-check';
import { createTxFromRLP } from '@ethereumjs/tx';
import { toRlp, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { ethereumjsCommon, hex, to0x, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';

const pad = (n: bigint | undefined) => `0x${(n ?? 0n).toString(16).padStart(64, '0')}`;

describe.each(transactionVectors.transactions)('parseSignedTransaction on $name', (v) => {
  it('splits off the signature exactly as @ethereumjs/tx does', () => {
    const parsed = parseSignedTransaction(hex(v.signed));
    const ejs = createTxFromRLP(hex(v.signed), { common: ethereumjsCommon(parsed.tx.chainId) });
    expect(to0x(parsed.r)).toBe(pad(ejs.r));
    expect(to0x(parsed.s)).toBe(pad(ejs.s));
    // @ethereumjs keeps the raw legacy v (27/28 or EIP-155) and the y-parity for typed envelopes.
    const v_ = ejs.v ?? 0n;
    const expected =
      parsed.tx.type !== 'legacy' ? v_ : parsed.tx.chainId === undefined ? v_ - 27n : (v_ - 35n) % 2n;
    expect(BigInt(parsed.yParity)).toBe(expected);
  });

  it('returns the unsigned serialization and the same transaction as the unsigned parser', () => {
    const parsed = parseSignedTransaction(hex(v.signed));
    expect(to0x(parsed.unsigned)).toBe(v.unsigned);
    expect(parsed.tx).toEqual(parseUnsignedTransaction(hex(v.unsigned)));
  });

  it('rejects the unsigned form', () => {
    expect(() => parseSignedTransaction(hex(v.unsigned))).toThrow('is not signed');
  });
});

describe('parseSignedTransaction legacy v', () => {
  const body: Hex[] = ['0x05', '0x01', '0x5208', `0x${'11'.repeat(20)}`, '0x', '0x'];
  const sig: Hex[] = [`0x${'22'.repeat(32)}`, `0x${'33'.repeat(32)}`];
  const withV = (v: Hex) => hex(toRlp([...body, v, ...sig]));

  it.each([
    ['0x1b', undefined, 0],
    ['0x1c', undefined, 1],
    ['0x25', 1n, 0],
    ['0x26', 1n, 1],
    ['0x01546d72', 11155111n, 1],
  ] as const)('v = %s → chain id %s, y-parity %s', (v, chainId, yParity) => {
    const parsed = parseSignedTransaction(withV(v));
    expect(parsed.tx.chainId).toBe(chainId);
    expect(parsed.yParity).toBe(yParity);
  });

  it.each(['0x', '0x01', '0x1d', '0x23', '0x24'] as const)('rejects v = %s', (v) => {
    const run = () => parseSignedTransaction(withV(v));
    expect(run).toThrow(CountersignError);
    expect(run).toThrow(/^failed to pre-parse Ethereum transaction: v: /);
  });

  it('rejects a typed y-parity of 2', () => {
    const typed = hex(
      `0x02${toRlp(['0x01', '0x', '0x', '0x01', '0x5208', `0x${'11'.repeat(20)}`, '0x', '0x', [], '0x02', ...sig]).slice(2)}`,
    );
    expect(() => parseSignedTransaction(typed)).toThrow('y_parity: must be 0 or 1');
  });

  it('rejects r wider than 32 bytes', () => {
    expect(() =>
      parseSignedTransaction(hex(toRlp([...body, '0x25', `0x01${'22'.repeat(32)}`, sig[1]!]))),
    ).toThrow('r: integer is wider than 256 bits');
  });
});

describe('parseSignedTransaction properties', () => {
  it('random bytes and mutated signed transactions never throw anything but CountersignError', () => {
    const samples = transactionVectors.transactions.map((v) => hex(v.signed));
    const check = (bytes: Uint8Array) => {
      try {
        parseSignedTransaction(bytes);
      } catch (e) {
        if (!(e instanceof CountersignError)) throw e;
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), check), { numRuns: 2000 });
    fc.assert(
      fc.property(fc.constantFrom(...samples), fc.nat(), fc.integer({ min: 0, max: 255 }), (s, at, byte) => {
        const b = s.slice();
        b[at % b.length] = byte;
        check(b);
      }),
      { numRuns: 2000 },
    );
  });
});
