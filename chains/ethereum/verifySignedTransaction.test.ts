import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { SECP256K1_N, signDigest } from '../../src/shared/secp256k1.js';
import { hex, to0x, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { signingDigest } from './signingDigest.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';
import type { EthTransaction } from './types.js';

const key = hex(transactionVectors.privateKey);
const SENDER = transactionVectors.sender;
const OTHER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

function sign(tx: EthTransaction) {
  const unsigned = serializeUnsignedTransaction(tx);
  const sig = signDigest(signingDigest(unsigned), key);
  return { unsigned, r: sig.compact.slice(0, 32), s: sig.compact.slice(32), yParity: sig.recovery };
}

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

const fixed = (v: bigint) => new Uint8Array(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'));

describe.each(transactionVectors.transactions)('verifySignedTransaction on $name', (v) => {
  const tx = parseUnsignedTransaction(hex(v.unsigned));
  const { unsigned, r, s, yParity } = sign(tx);
  const signed = assembleSignedTransaction(tx, { r, s, yParity });

  it('passes for the expected signer in any letter case, with or without 0x', () => {
    for (const who of [SENDER, SENDER.toLowerCase(), `0x${SENDER.slice(2).toUpperCase()}`, SENDER.slice(2)]) {
      const out = verifySignedTransaction(signed, unsigned, who);
      expect(out.signer).toBe(SENDER);
      expect(to0x(out.hash)).toBe(v.hash);
    }
  });

  it('fails for another expected signer', () => {
    expectFailure(() => verifySignedTransaction(signed, unsigned, OTHER), 'not the expected signer');
  });

  it('fails when the signed body was tampered with', () => {
    const tampered = assembleSignedTransaction({ ...tx, value: tx.value + 1n }, { r, s, yParity });
    expectFailure(() => verifySignedTransaction(tampered, unsigned, SENDER), 'body differs');
  });

  it('fails when body and unsigned were both changed after signing (recovers someone else)', () => {
    const changed = { ...tx, data: Uint8Array.of(...tx.data, 1) };
    const tampered = assembleSignedTransaction(changed, { r, s, yParity });
    expectFailure(
      () => verifySignedTransaction(tampered, serializeUnsignedTransaction(changed), SENDER),
      'not the expected signer',
    );
  });

  it('fails for the flipped y-parity', () => {
    const flipped = assembleSignedTransaction(tx, { r, s, yParity: 1 - yParity });
    expectFailure(() => verifySignedTransaction(flipped, unsigned, SENDER), 'not the expected signer');
  });

  it('fails for the high-S twin of a valid signature (EIP-2)', () => {
    const highS = fixed(SECP256K1_N - BigInt(to0x(s)));
    const twin = assembleSignedTransaction(tx, { r, s: highS, yParity: 1 - yParity });
    expectFailure(() => verifySignedTransaction(twin, unsigned, SENDER), 'lower half');
  });

  it('fails for r = 0', () => {
    const zero = assembleSignedTransaction(tx, { r: new Uint8Array(32), s, yParity });
    expectFailure(() => verifySignedTransaction(zero, unsigned, SENDER), 'does not recover');
  });

  it('fails for a flipped byte anywhere in the signed bytes', () => {
    for (let i = 0; i < signed.length; i++) {
      const bad = signed.slice();
      bad[i] = (bad[i] as number) ^ 0x01;
      expect(() => verifySignedTransaction(bad, unsigned, SENDER), `byte ${i}`).toThrow(CountersignError);
    }
  });

  it('fails when handed the unsigned transaction as the signed one', () => {
    expectFailure(() => verifySignedTransaction(unsigned, unsigned, SENDER), 'does not parse');
  });
});

describe('verifySignedTransaction input checks', () => {
  const v = transactionVectors.transactions[4]!;
  it('fails with trailing bytes after the signed transaction', () => {
    expectFailure(() => verifySignedTransaction(hex(`${v.signed}00`), hex(v.unsigned), SENDER), 'trailing');
  });

  it('fails when the expected signer is not an address', () => {
    expectFailure(() => verifySignedTransaction(hex(v.signed), hex(v.unsigned), '0x1234'), 'expected signer');
  });
});
