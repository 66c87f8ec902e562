import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';
import {
  factsToJson,
  fieldsFromJson,
  hex,
  toHex,
  transactionVectors,
} from '../../test/vectors/tron/vectors.js';
import { tronAdapter } from './index.js';

const key = hex(transactionVectors.privateKey);
const buildable = transactionVectors.transactions.filter((v) => v.fields !== null);

describe.each(buildable)('tronAdapter on $name', (v) => {
  it("serialize → parse → describe → digests → sign → assemble → verify yields tronweb's signed transaction", () => {
    const unsigned = tronAdapter.serialize(fieldsFromJson(v.fields!));
    expect(toHex(unsigned)).toBe(v.rawDataHex);
    const tx = tronAdapter.parse(unsigned);
    expect(factsToJson(tronAdapter.describe(tx, transactionVectors.signer))).toEqual(v.facts);
    const digests = tronAdapter.digests(tx, transactionVectors.signer);
    expect(digests).toHaveLength(1);
    expect(digests[0]!.scheme).toBe('ECDSA_SECP256K1');
    expect(toHex(digests[0]!.payload)).toBe(v.txID);
    const sig = signDigest(digests[0]!.payload, key);
    const raw = { r: sig.compact.subarray(0, 32), s: sig.compact.subarray(32), v: sig.recovery };
    const signed = tronAdapter.assemble(tx, [raw], transactionVectors.signer);
    expect(toHex(signed)).toBe(v.signedHex.toLowerCase());
    const verified = tronAdapter.verify(signed, unsigned, transactionVectors.signer);
    expect(toHex(verified.hash)).toBe(v.txID);
    expect(verified.signer).toBe(transactionVectors.signer);
    expect(verified.signatures).toEqual([raw]);
  });
});

describe('tronAdapter.assemble', () => {
  const unsigned = hex(transactionVectors.transactions[0]!.rawDataHex);
  const tx = tronAdapter.parse(unsigned);
  const sig = { r: new Uint8Array(32).fill(1), s: new Uint8Array(32).fill(2), v: 0 };

  it('rejects zero signatures', () => {
    expect(() => tronAdapter.assemble(tx, [], transactionVectors.signer)).toThrow(CountersignError);
  });

  it('rejects more than one signature', () => {
    expect(() => tronAdapter.assemble(tx, [sig, sig], transactionVectors.signer)).toThrow(
      'exactly one signature',
    );
  });
});
