import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import {
  NATIVE_SECP256K1_LOADED,
  convertPublicKey,
  recoveryIdOf,
  signDigest,
  verifyDigest,
} from './secp256k1.js';

const key = (): Uint8Array => secp256k1.utils.randomSecretKey();

describe('recoveryIdOf', () => {
  it('runs on the native binding', () => {
    expect(NATIVE_SECP256K1_LOADED).toBe(true);
  });

  it("answers the signer's recovery id, for compressed and uncompressed keys", () => {
    for (let i = 0; i < 64; i++) {
      const sk = key();
      const digest = new Uint8Array(randomBytes(32));
      const sig = signDigest(digest, sk);
      const compressed = secp256k1.getPublicKey(sk, true);
      expect(recoveryIdOf(digest, sig.compact, compressed)).toBe(sig.recovery);
      expect(recoveryIdOf(digest, sig.compact, convertPublicKey(compressed, false))).toBe(sig.recovery);
    }
  });

  it('is defined exactly when the signature verifies (checked against verifyDigest and @noble/curves)', () => {
    for (let i = 0; i < 64; i++) {
      const sk = key();
      const pub = secp256k1.getPublicKey(sk, true);
      const digest = new Uint8Array(randomBytes(32));
      const sig = signDigest(digest, sk).compact;
      const cases: [Uint8Array, Uint8Array, Uint8Array][] = [
        [digest, sig, pub],
        [digest, sig, secp256k1.getPublicKey(key(), true)], // another key
        [Uint8Array.from(digest, (b, j) => (j === i % 32 ? b ^ 1 : b)), sig, pub], // another digest
        [digest, Uint8Array.from(sig, (b, j) => (j === i % 32 ? b ^ 1 : b)), pub], // another r
      ];
      for (const [d, s, p] of cases) {
        const valid = verifyDigest(d, s, p);
        expect(valid).toBe(secp256k1.verify(s, d, p, { prehash: false, format: 'compact' }));
        expect(recoveryIdOf(d, s, p) !== undefined).toBe(valid);
      }
    }
  });

  it('refuses a high-s signature (the malleated twin of a valid one)', () => {
    const sk = key();
    const digest = new Uint8Array(randomBytes(32));
    const { compact } = signDigest(digest, sk);
    const n = secp256k1.Point.CURVE().n;
    const s = BigInt(`0x${Buffer.from(compact.subarray(32)).toString('hex')}`);
    const high = Uint8Array.from([
      ...compact.subarray(0, 32),
      ...Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex'),
    ]);
    expect(recoveryIdOf(digest, high, secp256k1.getPublicKey(sk, true))).toBeUndefined();
  });
});
