import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519Sign, ed25519Verify, NATIVE_ED25519_LOADED } from './ed25519.js';

// node:crypto (OpenSSL) is the second implementation these are checked against.
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI = Buffer.from('302a300506032b6570032100', 'hex');
const opensslSign = (seed: Uint8Array, msg: Uint8Array) =>
  sign(null, msg, createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' }));
const opensslPublic = (seed: Uint8Array): Uint8Array =>
  new Uint8Array(
    createPublicKey(createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' }))
      .export({ format: 'der', type: 'spki' })
      .subarray(SPKI.length),
  );

describe('native Ed25519 (libsodium)', () => {
  it('loaded the prebuilt addon', () => {
    expect(NATIVE_ED25519_LOADED).toBe(true);
  });

  it('signs exactly as OpenSSL does (Ed25519 is deterministic)', () => {
    for (let i = 0; i < 64; i++) {
      const seed = new Uint8Array(randomBytes(32));
      // Messages from empty to several blocks, some as views into a larger buffer.
      const backing = new Uint8Array(randomBytes(i * 13 + 8));
      const msg = i % 2 === 0 ? backing : backing.subarray(3, backing.length - 5);
      expect(Buffer.from(ed25519Sign(seed, msg))).toEqual(opensslSign(seed, msg));
    }
  });

  it('verifies what OpenSSL signed and refuses a changed message, signature or key', () => {
    for (let i = 0; i < 32; i++) {
      const seed = new Uint8Array(randomBytes(32));
      const msg = new Uint8Array(randomBytes(40 + i));
      const sig = new Uint8Array(opensslSign(seed, msg));
      const pub = opensslPublic(seed);
      expect(ed25519Verify(sig, msg, pub)).toBe(true);
      const otherMsg = msg.slice();
      otherMsg[i] = (otherMsg[i] as number) ^ 1;
      expect(ed25519Verify(sig, otherMsg, pub)).toBe(false);
      const otherSig = sig.slice();
      otherSig[i] = (otherSig[i] as number) ^ 1;
      expect(ed25519Verify(otherSig, msg, pub)).toBe(false);
      expect(ed25519Verify(sig, msg, opensslPublic(new Uint8Array(randomBytes(32))))).toBe(false);
      // Both implementations agree on every case above.
      const key = createPublicKey({ key: Buffer.concat([SPKI, pub]), format: 'der', type: 'spki' });
      expect(verify(null, msg, key, sig)).toBe(true);
      expect(verify(null, otherMsg, key, sig)).toBe(false);
    }
  });

  it('answers false for wrong lengths and throws for a seed that is not 32 bytes', () => {
    const seed = new Uint8Array(32).fill(7);
    const sig = ed25519Sign(seed, new Uint8Array([1]));
    expect(ed25519Verify(sig.subarray(1), new Uint8Array([1]), opensslPublic(seed))).toBe(false);
    expect(ed25519Verify(sig, new Uint8Array([1]), new Uint8Array(31))).toBe(false);
    expect(() => ed25519Sign(new Uint8Array(31), new Uint8Array([1]))).toThrow(RangeError);
  });
});
