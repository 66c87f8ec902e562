import { TxEnvelopeTempo } from 'ox/tempo';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';
import {
  DEV_ADDRESS_0,
  DEV_ADDRESS_1,
  DEV_KEY_0,
  DEV_KEY_1,
  hex,
  to0x,
} from '../../test/vectors/tempo/vectors.js';
import { feePayerDigest, tempoAdapter, type TempoTransactionFields } from './index.js';

const TOKEN = '0x20c0000000000000000000000000000000000000';
const fields: TempoTransactionFields = {
  chainId: '31337',
  nonce: '0',
  nonceKey: '',
  gasLimit: '300000',
  maxFeePerGas: '20000000000',
  maxPriorityFeePerGas: '1',
  calls: [{ to: TOKEN, value: '', data: Uint8Array.of(0x18, 0x16, 0x0d, 0xdd) }],
  accessList: [],
  validBefore: '',
  validAfter: '',
  feeToken: TOKEN,
  sponsored: false,
};

function raw(digest: Uint8Array, key: string) {
  const { compact, recovery } = signDigest(digest, hex(key));
  return { r: compact.subarray(0, 32), s: compact.subarray(32), v: recovery };
}

describe('tempoAdapter', () => {
  it('serialize → parse → digests → sign → assemble → verify', () => {
    const unsigned = tempoAdapter.serialize(fields);
    const tx = tempoAdapter.parse(unsigned);
    expect(tempoAdapter.describe(tx, { sender: DEV_ADDRESS_0 })['fee_token']).toBe(TOKEN);
    const digests = tempoAdapter.digests(tx, { sender: DEV_ADDRESS_0 });
    expect(digests).toHaveLength(1);
    expect(digests[0]!.scheme).toBe('ECDSA_SECP256K1');
    expect(to0x(digests[0]!.payload)).toBe(
      TxEnvelopeTempo.getSignPayload(TxEnvelopeTempo.deserialize(to0x(unsigned) as never)),
    );
    const sig = raw(digests[0]!.payload, DEV_KEY_0);
    const signed = tempoAdapter.assemble(tx, [sig], { sender: DEV_ADDRESS_0 });
    const verified = tempoAdapter.verify(signed, unsigned, { sender: DEV_ADDRESS_0 });
    expect(verified.signer).toBe(DEV_ADDRESS_0);
    expect(verified.signatures).toEqual([sig]);
  });

  it('takes the fee payer signature second for a sponsored transaction', () => {
    const unsigned = tempoAdapter.serialize({ ...fields, sponsored: true });
    const tx = tempoAdapter.parse(unsigned);
    const signer = { sender: DEV_ADDRESS_0, feePayer: DEV_ADDRESS_1 };
    const sponsoredTx = { ...tx, feeToken: hex(TOKEN) };
    const [digest, payerDigest, ...rest] = tempoAdapter.digests(sponsoredTx, signer);
    expect(rest).toEqual([]);
    // The fee payer's digest commits to the sender, which is why digests takes the signer.
    expect(payerDigest!.payload).toEqual(feePayerDigest(sponsoredTx, DEV_ADDRESS_0));
    const sigs = [raw(digest!.payload, DEV_KEY_0), raw(payerDigest!.payload, DEV_KEY_1)];
    const signed = tempoAdapter.assemble(sponsoredTx, sigs, signer);
    const verified = tempoAdapter.verify(signed, unsigned, signer);
    expect(verified).toMatchObject({ signer: DEV_ADDRESS_0, signatures: sigs });
    expect(() => tempoAdapter.verify(signed, unsigned, { ...signer, feePayer: DEV_ADDRESS_0 })).toThrow(
      CountersignError,
    );
  });

  it('rejects no signature, a second one when not sponsored, and three', () => {
    const unsigned = tempoAdapter.serialize(fields);
    const tx = tempoAdapter.parse(unsigned);
    const sig = { r: new Uint8Array(32).fill(1), s: new Uint8Array(32).fill(2), v: 0 };
    const sender = { sender: DEV_ADDRESS_0 };
    expect(() => tempoAdapter.assemble(tx, [], sender)).toThrow(CountersignError);
    expect(() => tempoAdapter.assemble(tx, [sig, sig], sender)).toThrow('two with a fee payer');
    expect(() => tempoAdapter.assemble({ ...tx, sponsored: true }, [sig, sig, sig], sender)).toThrow(
      CountersignError,
    );
  });
});
