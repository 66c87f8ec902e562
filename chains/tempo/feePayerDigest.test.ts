import fc from 'fast-check';
import { keccak256 } from 'ox/Hash';
import { TxEnvelopeTempo } from 'ox/tempo';
import { describe, expect, it } from 'vitest';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { DEV_ADDRESS_0, hex, oxVectors, to0x, toOx } from '../../test/vectors/tempo/vectors.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { senderDigest } from './senderDigest.js';

const sender = fc.uint8Array({ minLength: 20, maxLength: 20 });

describe('feePayerDigest', () => {
  it('equals ox TxEnvelopeTempo.getFeePayerSignPayload for random sponsored transactions', () => {
    fc.assert(
      fc.property(arbitraryTransaction(), sender, (t, from) => {
        const tx = { ...t, sponsored: true };
        expect(to0x(feePayerDigest(tx, from))).toBe(
          TxEnvelopeTempo.getFeePayerSignPayload(toOx(tx), { sender: to0x(from) }),
        );
        expect(feePayerDigest(tx, from)).not.toEqual(senderDigest(tx));
      }),
      { numRuns: 300 },
    );
  });

  it('is keccak256 of the 0x78 preimage in the ox vector "format: feePayer"', () => {
    const preimage = oxVectors.find((v) => v.kind === 'feePayerPreimage')!.hex;
    // The vector's transaction: chain 1, one call to 0x7099…79c8, nonce 0 (the "authorizationList (empty)" vector).
    const tx = parseUnsignedTransaction(
      hex(oxVectors.find((v) => v.name === 'TxEnvelopeTempo: authorizationList (empty)')!.hex),
    );
    expect(to0x(feePayerDigest({ ...tx, sponsored: true }, DEV_ADDRESS_0.toLowerCase()))).toBe(
      keccak256(preimage),
    );
  });

  it('commits to the fee token and the sender', () => {
    fc.assert(
      fc.property(arbitraryTransaction(), sender, sender, (t, a, b) => {
        fc.pre(to0x(a) !== to0x(b));
        const tx = { ...t, sponsored: true };
        expect(feePayerDigest(tx, a)).not.toEqual(feePayerDigest(tx, b));
        expect(feePayerDigest({ ...tx, feeToken: a }, a)).not.toEqual(
          feePayerDigest({ ...tx, feeToken: b }, a),
        );
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a transaction that is not sponsored, and a malformed sender', () => {
    const tx = parseUnsignedTransaction(hex(oxVectors.find((v) => v.kind === 'unsigned')!.hex));
    expect(() => feePayerDigest({ ...tx, sponsored: false }, DEV_ADDRESS_0)).toThrow('tempo.sponsored');
    expect(() => feePayerDigest({ ...tx, sponsored: true }, '0x1234')).toThrow('sender');
    expect(() => feePayerDigest({ ...tx, sponsored: true }, new Uint8Array(19))).toThrow('sender');
  });
});
