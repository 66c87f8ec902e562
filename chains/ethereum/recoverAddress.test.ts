import { recoverAddress as viemRecoverAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { SECP256K1_N, signDigest } from '../../src/shared/secp256k1.js';
import { hex, to0x, transactionVectors } from '../../test/vectors/ethereum/vectors.js';
import { recoverAddress } from './recoverAddress.js';

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
});
