import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { testSigner } from '../../test/vectors/solana/keys.js';
import { instructionMixes } from '../../test/vectors/solana/web3.js';
import { messageFromFields } from './messageFromFields.js';
import { requiredSignerIndex } from './requiredSignerIndex.js';
import { unsignedTransaction } from './unsignedTransaction.js';

// Mix 2: fee payer B, then C (read-only at first, made writable by a later instruction), then read-only A.
const tx = unsignedTransaction(messageFromFields(instructionMixes[2]!.fields));

describe('requiredSignerIndex', () => {
  it('finds each required signer at its slot, including read-only signers', () => {
    expect(requiredSignerIndex(tx, testSigner(1).publicKey)).toBe(0);
    expect(requiredSignerIndex(tx, testSigner(2).publicKey)).toBe(1);
    expect(requiredSignerIndex(tx, testSigner(0).publicKey)).toBe(2);
  });

  it('refuses an account key of the message that is not a signer, naming sign_with', () => {
    const nonSigner = tx.message.staticAccountKeys[3]!;
    let err: unknown;
    try {
      requiredSignerIndex(tx, nonSigner);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect(err).toMatchObject({
      code: 'SOLANA_SIGNER_NOT_REQUIRED',
      field: 'sign_with',
      message: 'sign_with: is not a required signer of this transaction',
    });
  });
});
