import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../../shared/encoding.js';
import { CURVES, generatePrivateKey, publicKeyOf } from './index.js';

describe('generatePrivateKey', () => {
  for (const curve of CURVES) {
    it(`makes distinct usable ${curve} keys`, () => {
      const seen = new Set<string>();
      for (let i = 0; i < 50; i++) {
        const k = generatePrivateKey(curve);
        expect(k).toHaveLength(32);
        seen.add(bytesToHex(k));
        expect(() => publicKeyOf(curve, k)).not.toThrow();
      }
      expect(seen.size).toBe(50);
    });
  }
});

describe('publicKeyOf', () => {
  it('returns the forms the other implementations compute', () => {
    const k1 = generatePrivateKey('CURVE_SECP256K1');
    expect(bytesToHex(publicKeyOf('CURVE_SECP256K1', k1))).toBe(bytesToHex(secp256k1.getPublicKey(k1, true)));
    const k2 = generatePrivateKey('CURVE_P256');
    expect(publicKeyOf('CURVE_P256', k2)).toHaveLength(33);
    expect(bytesToHex(publicKeyOf('CURVE_P256', k2))).toBe(bytesToHex(p256.getPublicKey(k2, true)));
    const k3 = generatePrivateKey('CURVE_ED25519');
    expect(bytesToHex(publicKeyOf('CURVE_ED25519', k3))).toBe(bytesToHex(ed25519.getPublicKey(k3)));
  });

  it('refuses a zero, out-of-range or short key with KEY_MATERIAL_UNAVAILABLE', () => {
    const n = new Uint8Array(32).fill(0xff);
    for (const [curve, key] of [
      ['CURVE_SECP256K1', new Uint8Array(32)],
      ['CURVE_SECP256K1', n],
      ['CURVE_P256', n],
      ['CURVE_ED25519', new Uint8Array(31)],
    ] as const) {
      expect(() => publicKeyOf(curve, key)).toThrow(
        expect.objectContaining({ code: 'KEY_MATERIAL_UNAVAILABLE' }),
      );
    }
  });
});
