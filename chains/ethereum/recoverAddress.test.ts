import { recoverAddress as viemRecoverAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { publicKeyOf, SECP256K1_N, signDigest } from '../../src/shared/secp256k1.js';
import { addressFromPublicKey } from './addressFromPublicKey.js';
import { hex, to0x, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { recoverAddress, recoveredAddressMemo } from './recoverAddress.js';

const key = hex(transactionVectors.privateKey);
const digest = new Uint8Array(32).fill(7);
const sig = signDigest(digest, key);
const r = sig.compact.slice(0, 32);
const s = sig.compact.slice(32);

describe('recoverAddress', () => {
  it('recovers the signer and agrees with viem recoverAddress', async () => {
    expect(recoverAddress(digest, r, s, sig.recovery)).toBe(transactionVectors.sender);
    expect(
      await viemRecoverAddress({
        hash: to0x(digest),
        signature: { r: to0x(r), s: to0x(s), yParity: sig.recovery },
      }),
    ).toBe(transactionVectors.sender);
  });

  it('accepts r and s without leading zero bytes', () => {
    const rTrim = r[0] === 0 ? r.subarray(1) : r;
    expect(recoverAddress(digest, rTrim, s, sig.recovery)).toBe(transactionVectors.sender);
  });

  it('recovers a different address for the other parity', () => {
    expect(recoverAddress(digest, r, s, 1 - sig.recovery)).not.toBe(transactionVectors.sender);
  });

  it('returns undefined for high-S, r = 0, parity 2 and over-long r', () => {
    const highS = hex((SECP256K1_N - BigInt(to0x(s))).toString(16).padStart(64, '0'));
    expect(recoverAddress(digest, r, highS, 1 - sig.recovery)).toBeUndefined();
    expect(recoverAddress(digest, new Uint8Array(32), s, sig.recovery)).toBeUndefined();
    expect(recoverAddress(digest, r, s, 2)).toBeUndefined();
    expect(recoverAddress(digest, new Uint8Array(33), s, sig.recovery)).toBeUndefined();
    expect(recoverAddress(digest.subarray(1), r, s, sig.recovery)).toBeUndefined();
  });

  it('answers a memo hit with the same address as the first, uncached recovery', async () => {
    const other = new Uint8Array(32).fill(9);
    const sig2 = signDigest(other, key);
    const before = recoveredAddressMemo.size;
    const first = recoverAddress(digest, r, s, sig.recovery);
    const size = recoveredAddressMemo.size;
    expect(size).toBeLessThanOrEqual(before + 1);
    // Another signature by the same key: the address comes from the memo, the same as viem's.
    const again = recoverAddress(other, sig2.compact.slice(0, 32), sig2.compact.slice(32), sig2.recovery);
    expect(recoveredAddressMemo.size).toBe(size);
    expect(again).toBe(first);
    expect(again).toBe(
      await viemRecoverAddress({
        hash: to0x(other),
        signature: {
          r: to0x(sig2.compact.slice(0, 32)),
          s: to0x(sig2.compact.slice(32)),
          yParity: sig2.recovery,
        },
      }),
    );
  });

  it('still refuses what fails recovery when the key is in the memo', () => {
    recoverAddress(digest, r, s, sig.recovery);
    const highS = hex((SECP256K1_N - BigInt(to0x(s))).toString(16).padStart(64, '0'));
    expect(recoverAddress(digest, r, highS, 1 - sig.recovery)).toBeUndefined();
    expect(recoverAddress(digest, new Uint8Array(32), s, sig.recovery)).toBeUndefined();
  });

  it('keeps the memo within its bound, and recovers every key right past it', () => {
    const seckey = new Uint8Array(32);
    const view = new DataView(seckey.buffer);
    for (let i = 1; i <= recoveredAddressMemo.limit + 50; i++) {
      view.setUint32(28, i);
      const sg = signDigest(digest, seckey);
      const got = recoverAddress(digest, sg.compact.slice(0, 32), sg.compact.slice(32), sg.recovery);
      if (i % 97 === 0 || i > recoveredAddressMemo.limit) {
        expect(got).toBe(addressFromPublicKey(publicKeyOf(seckey, false)));
      }
    }
    expect(recoveredAddressMemo.size).toBe(recoveredAddressMemo.limit);
  });
});
