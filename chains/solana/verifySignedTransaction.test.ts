import { base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { testSigner } from '../../test/vectors/solana/keys.js';
import { instructionMixes } from '../../test/vectors/solana/web3.js';
import { assemble } from './assemble.js';
import { messageFromFields } from './messageFromFields.js';
import { parseWireTransaction } from './parseWireTransaction.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import { unsignedTransaction } from './unsignedTransaction.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

const A = testSigner(0);
const B = testSigner(1);

function expectFailure(fn: () => unknown, reason: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe('SIGNATURE_VERIFICATION_FAILED');
  expect((err as CountersignError).message).toContain(reason);
}

// Two signers, A (fee payer, slot 0) and B (slot 1); v0 with lookups and legacy.
describe.each([instructionMixes[1]!, instructionMixes[5]!])(
  'verifySignedTransaction on "$name"',
  ({ fields }) => {
    const tx = unsignedTransaction(messageFromFields(fields));
    const unsigned = serializeWireTransaction(tx);
    const signed = assemble(tx, A.publicKey, A.sign(tx.messageBytes));
    const bSlot = tx.message.staticAccountKeys.findIndex((k) => base58.encode(k) === B.address);

    it('passes for the fee payer and returns its signature as the transaction id', () => {
      const out = verifySignedTransaction(signed, unsigned, A.address);
      expect(out.signer).toBe(A.address);
      expect(out.signerIndex).toBe(0);
      expect(out.hash).toEqual(A.sign(tx.messageBytes));
      expect(out.signature).toEqual(A.sign(tx.messageBytes));
      expect(out.missingSigners).toEqual([B.address]);
      expect(out.complete).toBe(false);
    });

    it('passes for the second signer against a wire whose slot 0 is already filled', () => {
      const both = assemble(parseWireTransaction(signed), B.publicKey, B.sign(tx.messageBytes));
      const out = verifySignedTransaction(both, signed, B.address);
      expect(out).toMatchObject({
        signer: B.address,
        signerIndex: bSlot,
        complete: true,
        missingSigners: [],
      });
      expect(out.signature).toEqual(B.sign(tx.messageBytes));
      expect(out.hash).toEqual(A.sign(tx.messageBytes));
    });

    it('fails for a tampered message byte anywhere in the message', () => {
      const start = signed.length - tx.messageBytes.length;
      for (let i = start; i < signed.length; i++) {
        const bad = signed.slice();
        bad[i] = (bad[i] as number) ^ 0x01;
        expect(() => verifySignedTransaction(bad, unsigned, A.address), `byte ${i}`).toThrow(
          CountersignError,
        );
      }
      const flipped = signed.slice();
      flipped[signed.length - 1] = (flipped[signed.length - 1] as number) ^ 0x01;
      expectFailure(() => verifySignedTransaction(flipped, unsigned, A.address), 'message differs');
    });

    it('fails when another signer’s slot was changed', () => {
      const bad = signed.slice();
      bad[1 + 64 * bSlot] = 1;
      expectFailure(
        () => verifySignedTransaction(bad, unsigned, A.address),
        `signature slot ${bSlot}, another signer's, differs`,
      );
    });

    it('fails for our slot signed by another key', () => {
      const wrong = assemble(tx, A.publicKey, B.sign(tx.messageBytes));
      expectFailure(() => verifySignedTransaction(wrong, unsigned, A.address), 'slot 0 does not verify');
    });

    it('fails for our slot left unsigned', () => {
      expectFailure(() => verifySignedTransaction(unsigned, unsigned, A.address), 'slot 0 does not verify');
    });

    it('fails when the expected signer is not a required signer', () => {
      expectFailure(
        () => verifySignedTransaction(signed, unsigned, testSigner(7).address),
        'is not a required signer of this transaction',
      );
    });

    it('fails for an expected signer that is not a base58 public key', () => {
      expectFailure(() => verifySignedTransaction(signed, unsigned, '0x1234'), 'not base58');
      expectFailure(() => verifySignedTransaction(signed, unsigned, '1111'), 'not a 32-byte public key');
    });

    it('fails for truncated or trailing bytes in the signed transaction', () => {
      expectFailure(
        () => verifySignedTransaction(signed.subarray(0, -1), unsigned, A.address),
        'does not parse',
      );
      expectFailure(
        () => verifySignedTransaction(Uint8Array.from([...signed, 0]), unsigned, A.address),
        'trailing',
      );
    });

    it('fails when the unsigned reference does not parse', () => {
      expectFailure(
        () => verifySignedTransaction(signed, unsigned.subarray(1), A.address),
        'unsigned transaction does not parse',
      );
    });
  },
);
