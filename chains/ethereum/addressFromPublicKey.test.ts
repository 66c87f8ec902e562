import { publicKeyToAddress } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { publicKeyOf } from '../../src/shared/secp256k1.js';
import { hex, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { addressFromPublicKey } from './addressFromPublicKey.js';

const key = hex(transactionVectors.privateKey);

describe('addressFromPublicKey', () => {
  it('derives the anvil account 0 address from the compressed and the uncompressed key', () => {
    expect(addressFromPublicKey(publicKeyOf(key, true))).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(addressFromPublicKey(publicKeyOf(key, false))).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  it('agrees with viem publicKeyToAddress', () => {
    for (let i = 1; i < 20; i++) {
      const sk = new Uint8Array(32).fill(i);
      const pub = publicKeyOf(sk, false);
      expect(addressFromPublicKey(pub)).toBe(publicKeyToAddress(`0x${Buffer.from(pub).toString('hex')}`));
    }
  });

  it.each([
    ['a 64-byte key', new Uint8Array(64).fill(1)],
    ['a point not on the curve', Uint8Array.of(0x02, ...new Uint8Array(32).fill(0xff))],
    ['an empty key', new Uint8Array(0)],
  ])('rejects %s', (_n, pub) => {
    expect(() => addressFromPublicKey(pub)).toThrow(CountersignError);
  });
});
