import fc from 'fast-check';
import { TxEnvelopeTempo } from 'ox/tempo';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { DEV_ADDRESS_0, DEV_KEY_0, DEV_KEY_1, hex, to0x } from '../../test/vectors/tempo/vectors.js';
import { assemble } from './assemble.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseTransactionToSign } from './parseTransactionToSign.js';
import { senderDigest } from './senderDigest.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { TempoSignature, TempoTransaction } from './types.js';

function sign(digest: Uint8Array, key: string): TempoSignature {
  const { compact, recovery } = signDigest(digest, hex(key));
  return { r: compact.subarray(0, 32), s: compact.subarray(32), yParity: recovery };
}

function thrown(run: () => unknown): CountersignError {
  try {
    run();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

const tx = (sponsored: boolean): TempoTransaction =>
  transactionFromFields({
    chainId: '31337',
    nonce: '3',
    nonceKey: '',
    gasLimit: '500000',
    maxFeePerGas: '20000000000',
    maxPriorityFeePerGas: '1',
    calls: [{ to: '0x20c0000000000000000000000000000000000000', value: '', data: hex('0x70a08231') }],
    accessList: [],
    validBefore: '',
    validAfter: '',
    feeToken: '',
    sponsored,
  });

describe('parseTransactionToSign', () => {
  it('reads the unsigned serialization as a sender signing request', () => {
    const unsigned = serializeUnsignedTransaction(tx(false));
    const input = parseTransactionToSign(unsigned);
    expect(input.kind).toBe('sender');
    expect(to0x(input.unsigned)).toBe(to0x(unsigned));
    expect(input.tx).toEqual(tx(false));
  });

  it('reads the sender-signed hand-off as a fee payer signing request and recovers the sender', () => {
    const t = tx(true);
    const senderSig = sign(senderDigest(t), DEV_KEY_0);
    const handOff = assemble(t, senderSig);
    // ox agrees this is a sender-signed envelope awaiting its fee payer.
    const env = TxEnvelopeTempo.deserialize(to0x(handOff) as TxEnvelopeTempo.Serialized);
    expect(env.feePayerSignature).toBeNull();

    const input = parseTransactionToSign(handOff);
    if (input.kind !== 'feePayer') throw new Error(`expected a fee payer request, got ${input.kind}`);
    expect(input.sender).toBe(DEV_ADDRESS_0);
    expect(to0x(input.unsigned)).toBe(to0x(serializeUnsignedTransaction(t)));
    expect(to0x(input.senderSignature.r)).toBe(to0x(senderSig.r));
    // What the fee payer then signs is ox's fee payer payload for that sender.
    expect(to0x(feePayerDigest(input.tx, input.sender))).toBe(
      TxEnvelopeTempo.getFeePayerSignPayload(env, { sender: DEV_ADDRESS_0 }),
    );
  });

  it('refuses a signed transaction that is not sponsored: nothing is left to sign', () => {
    const t = tx(false);
    const e = thrown(() => parseTransactionToSign(assemble(t, sign(senderDigest(t), DEV_KEY_0))));
    expect(e.code).toBe('TEMPO_MALFORMED_TRANSACTION');
    expect(e.message).toContain('signature: the transaction already carries a signature');
  });

  it('refuses a sponsored transaction the fee payer has already signed', () => {
    const t = tx(true);
    const final = assemble(
      t,
      sign(senderDigest(t), DEV_KEY_0),
      sign(feePayerDigest(t, DEV_ADDRESS_0), DEV_KEY_1),
    );
    const e = thrown(() => parseTransactionToSign(final));
    expect(e.code).toBe('TEMPO_MALFORMED_TRANSACTION');
    expect(e.message).toContain('fee_payer_signature: the fee payer has already signed');
  });

  it('refuses a hand-off whose sender signature recovers nobody', () => {
    const t = tx(true);
    const bad = assemble(t, { r: new Uint8Array(32), s: Uint8Array.of(1), yParity: 0 });
    const e = thrown(() => parseTransactionToSign(bad));
    expect(e.code).toBe('TEMPO_MALFORMED_TRANSACTION');
    expect(e.message).toContain('signature: the sender signature is invalid');
  });

  it('takes back exactly what the parsers of both forms take', () => {
    fc.assert(
      fc.property(arbitraryTransaction(), (t) => {
        const unsigned = serializeUnsignedTransaction(t);
        expect(parseTransactionToSign(unsigned).kind).toBe('sender');
        if (t.sponsored) {
          const handOff = assemble(t, sign(senderDigest(t), DEV_KEY_0));
          expect(parseTransactionToSign(handOff)).toMatchObject({ kind: 'feePayer', sender: DEV_ADDRESS_0 });
        }
      }),
      { numRuns: 100 },
    );
  });

  it('never throws anything but CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseTransactionToSign(Uint8Array.of(0x76, ...bytes));
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
