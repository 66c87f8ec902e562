import { describe, expect, it } from 'vitest';
import { ethereumAdapter } from '../../../chains/ethereum/index.js';
import { hex, transactionVectors } from '../../../test/vectors/ethereum/vectors.js';
import { ethereumChain } from './ethereum.js';

describe('ethereumChain', () => {
  // A sign_transaction request plans its activity from digestCount without computing the digests.
  it.each(transactionVectors.transactions)('digestCount is what the adapter lists for $name', (v) => {
    const digests = ethereumAdapter.digests(ethereumAdapter.parse(hex(v.unsigned)), v.sender);
    expect(digests.length).toBe(ethereumChain.digestCount);
    expect(digests[0]?.payload).toEqual(hex(v.digest));
  });
});
