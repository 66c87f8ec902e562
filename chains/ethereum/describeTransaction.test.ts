import { describe, expect, it } from 'vitest';
import { fieldsFromJson, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { describeTransaction } from './describeTransaction.js';
import { transactionFromFields } from './transactionFromFields.js';

const FROM = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const txOf = (i: number) => transactionFromFields(fieldsFromJson(transactionVectors.transactions[i]!.fields));

describe('describeTransaction', () => {
  it('gives the eth.tx facts of an EIP-1559 transfer with gas_price = max_fee_per_gas', () => {
    expect(describeTransaction(txOf(4), FROM)).toEqual({
      from: FROM.toLowerCase(),
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      data: '0x',
      value: 123456789n,
      gas: 21000n,
      gas_price: 30_000_000_000n,
      chain_id: 1n,
      nonce: 0n,
      max_fee_per_gas: 30_000_000_000n,
      max_priority_fee_per_gas: 1_000_000_000n,
      max_fee_per_blob_gas: 0n,
      type: 'TYPE_2',
    });
  });

  it('prices a legacy transaction with gas_price for both fee caps and lower-cases data', () => {
    const facts = describeTransaction(txOf(1), FROM);
    expect(facts).toMatchObject({
      type: 'LEGACY',
      gas_price: 1_500_000_000n,
      max_fee_per_gas: 1_500_000_000n,
      max_priority_fee_per_gas: 1_500_000_000n,
      chain_id: 11155111n,
    });
    expect(facts['data']).toMatch(/^0xa9059cbb[0-9a-f]+$/);
  });

  it("reports contract creation as to '' and a pre-EIP-155 chain id as 0", () => {
    expect(describeTransaction(txOf(2), FROM)).toMatchObject({ to: '', chain_id: 0n, type: 'LEGACY' });
  });

  it.each([
    [3, 'TYPE_1'],
    [6, 'TYPE_3'],
    [7, 'TYPE_4'],
  ] as const)('labels vector %i as %s', (i, type) => {
    expect(describeTransaction(txOf(i), FROM)['type']).toBe(type);
  });

  it('carries max_fee_per_blob_gas for EIP-4844', () => {
    expect(describeTransaction(txOf(6), FROM)['max_fee_per_blob_gas']).toBe(1_000_000_000n);
  });

  it('returns numbers as bigint and addresses as strings for every type', () => {
    for (const v of transactionVectors.transactions) {
      const facts = describeTransaction(transactionFromFields(fieldsFromJson(v.fields)), FROM);
      for (const k of [
        'value',
        'gas',
        'gas_price',
        'chain_id',
        'nonce',
        'max_fee_per_gas',
        'max_priority_fee_per_gas',
        'max_fee_per_blob_gas',
      ]) {
        expect(typeof facts[k], k).toBe('bigint');
      }
      expect(facts['to']).toMatch(/^(0x[0-9a-f]{40})?$/);
    }
  });
});
