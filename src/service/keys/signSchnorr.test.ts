import { randomBytes } from 'node:crypto';
import { schnorr } from '@noble/curves/secp256k1.js';
import { bech32m } from '@scure/base';
import { describe, expect, it } from 'vitest';
import vectors from '../../../test/vectors/keys/addresses.json' with { type: 'json' };
import { concatBytes } from '../../shared/encoding.js';
import {
  deriveAddress,
  derivePrivateKey,
  generatePrivateKey,
  mnemonicToSeed,
  publicKeyOf,
  signSchnorr,
  signSchnorrTaproot,
} from './index.js';

/** The witness program of a P2TR address: the x-only output key. */
function outputKeyOf(address: string): Uint8Array {
  const { words } = bech32m.decode(address as `${string}1${string}`);
  expect(words[0]).toBe(1);
  return bech32m.fromWords(words.slice(1));
}

describe('signSchnorrTaproot', () => {
  it('verifies under the output key of the BIP-86 vector address', () => {
    const seed = mnemonicToSeed(vectors.mnemonic);
    for (const v of vectors.valid.filter((x) => x.format === 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR')) {
      const key = derivePrivateKey(seed, 'CURVE_SECP256K1', v.path, 'path');
      const digest = Uint8Array.from(randomBytes(32));
      const sig = signSchnorrTaproot(key, digest);
      expect(sig.v).toBe(0);
      expect(schnorr.verify(concatBytes(sig.r, sig.s), digest, outputKeyOf(v.address))).toBe(true);
    }
  });

  it('verifies under the P2TR address of random keys (odd and even Y) and not under the internal key', () => {
    const parities = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const key = generatePrivateKey('CURVE_SECP256K1');
      const pub = publicKeyOf('CURVE_SECP256K1', key);
      parities.add(pub[0] as number);
      const address = deriveAddress('CURVE_SECP256K1', pub, 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR', 'f');
      const digest = Uint8Array.from(randomBytes(32));
      const { r, s } = signSchnorrTaproot(key, digest);
      const sig = concatBytes(r, s);
      expect(schnorr.verify(sig, digest, outputKeyOf(address))).toBe(true);
      expect(schnorr.verify(sig, digest, pub.subarray(1))).toBe(false);
    }
    // 40 random keys leave one parity out with probability 2^-39.
    expect(parities).toEqual(new Set([2, 3]));
  });
});

describe('signSchnorr', () => {
  it('is BIP-340 under the untweaked x-only key', () => {
    for (let i = 0; i < 40; i++) {
      const key = generatePrivateKey('CURVE_SECP256K1');
      const digest = Uint8Array.from(randomBytes(32));
      const sig = signSchnorr(key, digest);
      expect(sig.r).toHaveLength(32);
      expect(sig.s).toHaveLength(32);
      expect(sig.v).toBe(0);
      expect(schnorr.verify(concatBytes(sig.r, sig.s), digest, schnorr.getPublicKey(key))).toBe(true);
    }
  });

  it('rejects a digest that is not 32 bytes', () => {
    const key = generatePrivateKey('CURVE_SECP256K1');
    expect(() => signSchnorr(key, new Uint8Array(31))).toThrow(
      expect.objectContaining({ code: 'PAYLOAD_INVALID' }),
    );
    expect(() => signSchnorrTaproot(key, new Uint8Array(33))).toThrow(
      expect.objectContaining({ code: 'PAYLOAD_INVALID' }),
    );
  });
});
