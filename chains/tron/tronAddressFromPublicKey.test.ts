import { utils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { publicKeyOf } from '../../src/shared/secp256k1.js';
import { hex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { tronAddressFromPublicKey } from './tronAddressFromPublicKey.js';

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

  it('rejects bytes that are not a public key', () => {
    expect(() => tronAddressFromPublicKey(new Uint8Array(33))).toThrow(CountersignError);
  });
});
