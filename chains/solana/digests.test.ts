import { describe, expect, it } from 'vitest';
import { testSigner } from '../../test/vectors/solana/keys.js';
import { instructionMixes, web3Compile } from '../../test/vectors/solana/web3.js';
import { digests } from './digests.js';
import { messageFromFields } from './messageFromFields.js';
import { unsignedTransaction } from './unsignedTransaction.js';

describe('digests', () => {
  const { fields } = instructionMixes[1]!;
  const tx = unsignedTransaction(messageFromFields(fields));

  it('asks each required signer to sign the message bytes themselves with ed25519', () => {
    for (const n of [0, 1]) {
      expect(digests(tx, testSigner(n).publicKey)).toEqual([
        { scheme: 'ED25519', payload: new Uint8Array(web3Compile(fields).serialize()) },
      ]);
    }
  });

  it('refuses a key that is not a required signer', () => {
    expect(() => digests(tx, testSigner(2).publicKey)).toThrow('sign_with: is not a required signer');
  });
});
