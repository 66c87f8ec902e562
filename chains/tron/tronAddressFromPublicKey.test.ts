import { utils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { publicKeyOf } from '../../src/shared/secp256k1.js';
import { hex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { tronAddressFromPublicKey, tronAddressMemo } from './tronAddressFromPublicKey.js';

const key = hex(transactionVectors.privateKey);

describe('tronAddressFromPublicKey', () => {
  it('gives TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaG for the anvil dev key (chains.md), compressed or not', () => {
    expect(tronAddressFromPublicKey(publicKeyOf(key, false))).toBe('TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaG');
    expect(tronAddressFromPublicKey(publicKeyOf(key, true))).toBe('TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaG');
  });

  it("agrees with tronweb's computeAddress on a few keys", () => {
    for (let i = 1; i <= 5; i++) {
      const k = new Uint8Array(32).fill(i);
      const pub = publicKeyOf(k, false);
      const theirs = utils.crypto.getBase58CheckAddress(utils.crypto.computeAddress(pub));
      expect(tronAddressFromPublicKey(pub)).toBe(theirs);
    }
  });

  it('rejects bytes that are not a public key, also after a valid key was remembered', () => {
    expect(() => tronAddressFromPublicKey(new Uint8Array(33))).toThrow(CountersignError);
    tronAddressFromPublicKey(publicKeyOf(key, true));
    expect(() => tronAddressFromPublicKey(new Uint8Array(33))).toThrow(CountersignError);
  });

  it('remembers at most its bound of keys and answers a remembered key as tronweb does', () => {
    for (let i = 0; i < tronAddressMemo.limit + 10; i++) {
      const k = new Uint8Array(32);
      new DataView(k.buffer).setUint32(28, i + 1);
      tronAddressFromPublicKey(publicKeyOf(k, true));
    }
    expect(tronAddressMemo.size).toBe(tronAddressMemo.limit);
    const pub = publicKeyOf(new Uint8Array(32).fill(9), false);
    const theirs = utils.crypto.getBase58CheckAddress(utils.crypto.computeAddress(pub));
    expect(tronAddressFromPublicKey(pub)).toBe(theirs);
    expect(tronAddressFromPublicKey(pub)).toBe(theirs);
  });
});
