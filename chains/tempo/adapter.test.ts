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
    expect(tempoAdapter.describe(tx, DEV_ADDRESS_0)['fee_token']).toBe(TOKEN);
    const digests = tempoAdapter.digests(tx, unsigned);
    expect(digests).toHaveLength(1);
    expect(digests[0]!.scheme).toBe('ECDSA_SECP256K1');
    expect(to0x(digests[0]!.payload)).toBe(
      TxEnvelopeTempo.getSignPayload(TxEnvelopeTempo.deserialize(to0x(unsigned) as never)),
    );
    const signed = tempoAdapter.assemble(tx, unsigned, [raw(digests[0]!.payload, DEV_KEY_0)]);
    expect(tempoAdapter.verify(signed, unsigned, DEV_ADDRESS_0).signer).toBe(DEV_ADDRESS_0);
  });

  it('takes the fee payer signature second for a sponsored transaction', () => {
    const unsigned = tempoAdapter.serialize({ ...fields, sponsored: true });
    const tx = tempoAdapter.parse(unsigned);
    const [digest] = tempoAdapter.digests(tx, unsigned);
    const sponsoredTx = { ...tx, feeToken: hex(TOKEN) };
    const signed = tempoAdapter.assemble(sponsoredTx, unsigned, [
      raw(digest!.payload, DEV_KEY_0),
      raw(feePayerDigest(sponsoredTx, DEV_ADDRESS_0), DEV_KEY_1),
    ]);
    const verified = tempoAdapter.verify(signed, unsigned, DEV_ADDRESS_0);
    expect(verified).toMatchObject({ signer: DEV_ADDRESS_0, feePayer: DEV_ADDRESS_1 });
  });

  it('rejects no signature, a second one when not sponsored, and three', () => {
    const unsigned = tempoAdapter.serialize(fields);
    const tx = tempoAdapter.parse(unsigned);
    const sig = { r: new Uint8Array(32).fill(1), s: new Uint8Array(32).fill(2), v: 0 };
    expect(() => tempoAdapter.assemble(tx, unsigned, [])).toThrow(CountersignError);
    expect(() => tempoAdapter.assemble(tx, unsigned, [sig, sig])).toThrow('two when sponsored');
    expect(() => tempoAdapter.assemble({ ...tx, sponsored: true }, unsigned, [sig, sig, sig])).toThrow(
      CountersignError,
    );
  });
});
