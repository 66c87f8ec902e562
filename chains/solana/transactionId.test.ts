import { base58 } from '@scure/base';
import { VersionedTransaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { testSigner } from '../../test/vectors/solana/keys.js';
import { instructionMixes } from '../../test/vectors/solana/web3.js';
import { assemble } from './assemble.js';
import { messageFromFields } from './messageFromFields.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import { transactionId } from './transactionId.js';
import { unsignedTransaction } from './unsignedTransaction.js';

describe('transactionId', () => {
  const tx = unsignedTransaction(messageFromFields(instructionMixes[0]!.fields));
  const signed = assemble(tx, testSigner(0).publicKey, testSigner(0).sign(tx.messageBytes));

  it('is base58 of the fee payer’s signature, as web3.js reads it', () => {
    const id = transactionId(signed);
    expect(id).toBe(base58.encode(VersionedTransaction.deserialize(signed).signatures[0]!));
    expect(base58.decode(id)).toEqual(signed.subarray(1, 65));
  });

  it('refuses a transaction whose fee payer has not signed yet', () => {
    expect(() => transactionId(serializeWireTransaction(tx))).toThrow(CountersignError);
    expect(() => transactionId(serializeWireTransaction(tx))).toThrow('has no id yet');
  });
});
