import { createTxFromRLP } from '@ethereumjs/tx';
import { keccak256, serializeTransaction } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  ethereumjsCommon,
  fieldsFromJson,
  to0x,
  transactionVectors,
  toViem,
} from '../../test/vectors/ethereum/vectors.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { signingDigest } from './signingDigest.js';
import { transactionFromFields } from './transactionFromFields.js';

describe.each(transactionVectors.transactions)('$name', (v) => {
  const tx = transactionFromFields(fieldsFromJson(v.fields));
  const unsigned = serializeUnsignedTransaction(tx);

  it('serializes byte-identically to the fixture and to viem serializeTransaction', () => {
    expect(to0x(unsigned)).toBe(v.unsigned);
    expect(to0x(unsigned)).toBe(serializeTransaction(toViem(tx)));
  });

  it('parses back to the same transaction (parse ∘ serialize = id)', () => {
    const parsed = parseUnsignedTransaction(unsigned);
    expect(parsed).toEqual(tx);
    expect(to0x(serializeUnsignedTransaction(parsed))).toBe(v.unsigned);
  });

  it('signing digest equals viem keccak256 and @ethereumjs getHashedMessageToSign', () => {
    const digest = to0x(signingDigest(unsigned));
    expect(digest).toBe(v.digest);
    expect(digest).toBe(keccak256(v.unsigned));
    const ejs = createTxFromRLP(Buffer.from(v.signed.slice(2), 'hex'), {
      common: ethereumjsCommon(tx.chainId),
    });
    expect(to0x(ejs.getHashedMessageToSign())).toBe(digest);
  });
});
