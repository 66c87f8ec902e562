import { describe, expect, it } from 'vitest';
import { factsToJson, hex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { describeTransaction } from './describeTransaction.js';
import { parseRawData } from './parseRawData.js';

describe.each(transactionVectors.transactions)('describeTransaction on $name', (v) => {
  it("gives the tron.tx facts read off tronweb's JSON of the same transaction", () => {
    expect(factsToJson(describeTransaction(parseRawData(hex(v.rawDataHex))))).toEqual(v.facts);
  });
});

describe('describeTransaction value types', () => {
  it('gives numbers as bigint and addresses as base58', () => {
    const facts = describeTransaction(parseRawData(hex(transactionVectors.transactions[3]!.rawDataHex)));
    expect(facts['fee_limit']).toBe(100_000_000n);
    const [c] = facts['contract'] as Record<string, unknown>[];
    expect(c!['call_value']).toBe(0n);
    expect(c!['permission_id']).toBe(0n);
    expect(c!['owner_address']).toBe(transactionVectors.signer);
    expect(c!['contract_address']).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  });
});
