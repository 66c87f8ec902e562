import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';
import { fieldsFromJson, hex, to0x, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { ethereumAdapter } from './index.js';

const key = hex(transactionVectors.privateKey);

describe.each(transactionVectors.transactions)('ethereumAdapter on $name', (v) => {
  it('serialize → parse → digests → sign → assemble → verify yields the viem-signed transaction', () => {
    const unsigned = ethereumAdapter.serialize(fieldsFromJson(v.fields));
    expect(to0x(unsigned)).toBe(v.unsigned);
    const tx = ethereumAdapter.parse(unsigned);
    expect(ethereumAdapter.describe(tx, v.sender)['from']).toBe(v.sender.toLowerCase());
    const digests = ethereumAdapter.digests(tx, v.sender);
    expect(digests).toHaveLength(1);
    expect(digests[0]!.scheme).toBe('ECDSA_SECP256K1');
    expect(to0x(digests[0]!.payload)).toBe(v.digest);
    const sig = signDigest(digests[0]!.payload, key);
    const raw = { r: sig.compact.subarray(0, 32), s: sig.compact.subarray(32), v: sig.recovery };
    const signed = ethereumAdapter.assemble(tx, [raw], v.sender);
    expect(to0x(signed)).toBe(v.signed);
    const verified = ethereumAdapter.verify(signed, unsigned, v.sender);
    expect(to0x(verified.hash)).toBe(v.hash);
    expect(verified.signer).toBe(v.sender);
    expect(verified.signatures).toEqual([raw]);
  });
});

describe('ethereumAdapter.assemble', () => {
  const v = transactionVectors.transactions[4]!;
  const unsigned = hex(v.unsigned);
  const tx = ethereumAdapter.parse(unsigned);
  const sig = { r: new Uint8Array(32).fill(1), s: new Uint8Array(32).fill(2), v: 0 };

  it('rejects zero signatures', () => {
    expect(() => ethereumAdapter.assemble(tx, [], v.sender)).toThrow(CountersignError);
  });

  it('rejects more than one signature', () => {
    expect(() => ethereumAdapter.assemble(tx, [sig, sig], v.sender)).toThrow('exactly one signature');
  });
});
