import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes } from '../../shared/encoding.js';
import { NATIVE_SECP256K1_LOADED, isLowS, recoverPublicKey } from '../../shared/secp256k1.js';
import { generatePrivateKey, publicKeyOf, signEcdsaSecp256k1 } from './index.js';

describe('signEcdsaSecp256k1', () => {
  it('runs on the native libsecp256k1 binding', () => {
    expect(NATIVE_SECP256K1_LOADED).toBe(true);
  });

  it('equals noble’s RFC 6979 low-S signature and recovery id over 300 random keys and digests', () => {
    for (let i = 0; i < 300; i++) {
      const key = generatePrivateKey('CURVE_SECP256K1');
      const digest = Uint8Array.from(randomBytes(32));
      const sig = signEcdsaSecp256k1(key, digest);
      const ref = secp256k1.sign(digest, key, { prehash: false, lowS: true, format: 'recovered' });
      expect(bytesToHex(concatBytes(Uint8Array.of(sig.v), sig.r, sig.s))).toBe(bytesToHex(ref));
      expect(isLowS(concatBytes(sig.r, sig.s))).toBe(true);
    }
  });

  it('is deterministic and v recovers the signer', () => {
    const key = generatePrivateKey('CURVE_SECP256K1');
    const digest = Uint8Array.from(randomBytes(32));
    const a = signEcdsaSecp256k1(key, digest);
    const b = signEcdsaSecp256k1(key, digest);
    expect(bytesToHex(concatBytes(a.r, a.s))).toBe(bytesToHex(concatBytes(b.r, b.s)));
    expect(a.r).toHaveLength(32);
    expect(a.s).toHaveLength(32);
    const recovered = recoverPublicKey(digest, concatBytes(a.r, a.s), a.v, true);
    expect(recovered && bytesToHex(recovered)).toBe(bytesToHex(publicKeyOf('CURVE_SECP256K1', key)));
  });

  it('rejects a digest that is not 32 bytes and an invalid key', () => {
    const key = generatePrivateKey('CURVE_SECP256K1');
    for (const len of [0, 31, 33, 64]) {
      expect(() => signEcdsaSecp256k1(key, new Uint8Array(len))).toThrow(
        expect.objectContaining({ code: 'PAYLOAD_INVALID' }),
      );
    }
    expect(() => signEcdsaSecp256k1(new Uint8Array(32), new Uint8Array(32))).toThrow(
      expect.objectContaining({ code: 'KEY_MATERIAL_UNAVAILABLE' }),
    );
  });
});
