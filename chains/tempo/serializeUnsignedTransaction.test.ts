import fc from 'fast-check';
import { TxEnvelopeTempo } from 'ox/tempo';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { hex, oxVectors, to0x, toOx } from '../../test/vectors/tempo/vectors.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { TempoTransaction } from './types.js';

const base: TempoTransaction = parseUnsignedTransaction(
  hex(oxVectors.find((v) => v.name === 'TxEnvelopeTempo: multiple calls')!.hex),
);

describe('serializeUnsignedTransaction', () => {
  it('equals ox TxEnvelopeTempo.serialize for random valid transactions', () => {
    fc.assert(
      fc.property(arbitraryTransaction(), (tx) => {
        expect(to0x(serializeUnsignedTransaction(tx))).toBe(TxEnvelopeTempo.serialize(toOx(tx)));
      }),
      { numRuns: 500 },
    );
  });

  it('omits the fee token of a sponsored transaction and writes the 0x00 marker, as ox does', () => {
    const token = new Uint8Array(20).fill(0x20);
    const sponsored = serializeUnsignedTransaction({ ...base, feeToken: token, sponsored: true });
    expect(sponsored).toEqual(serializeUnsignedTransaction({ ...base, feeToken: null, sponsored: true }));
    expect(to0x(sponsored)).toBe(
      TxEnvelopeTempo.serialize({ ...toOx(base), feeToken: to0x(token), feePayerSignature: null }),
    );
    expect(to0x(serializeUnsignedTransaction({ ...base, feeToken: token }))).toContain(to0x(token).slice(2));
  });

  it('refuses an empty calls list', () => {
    expect(() => serializeUnsignedTransaction({ ...base, calls: [] })).toThrow(
      'tempo.calls: must hold at least one call',
    );
  });

  it.each([
    [100n, 100n],
    [100n, 200n],
  ])('refuses valid_before %s with valid_after %s, naming valid_before', (validBefore, validAfter) => {
    const run = () => serializeUnsignedTransaction({ ...base, validBefore, validAfter });
    expect(run).toThrow(CountersignError);
    expect(run).toThrow(
      `tempo.valid_before: (${validBefore}) must be greater than valid_after (${validAfter})`,
    );
  });

  it('refuses a zero validity bound (ox would write the non-canonical 0x00 the node refuses)', () => {
    expect(() => serializeUnsignedTransaction({ ...base, validAfter: 0n })).toThrow('tempo.valid_after');
  });

  it('refuses out-of-range widths', () => {
    expect(() => serializeUnsignedTransaction({ ...base, nonce: 1n << 64n })).toThrow('tempo.nonce');
    expect(() => serializeUnsignedTransaction({ ...base, chainId: 0n })).toThrow('tempo.chain_id');
    expect(() => serializeUnsignedTransaction({ ...base, maxFeePerGas: 1n << 128n })).toThrow(
      'tempo.max_fee_per_gas',
    );
    expect(() => serializeUnsignedTransaction({ ...base, feeToken: new Uint8Array(19) })).toThrow(
      'tempo.fee_token',
    );
  });
});
