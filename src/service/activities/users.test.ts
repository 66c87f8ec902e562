import { p256 } from '@noble/curves/nist.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { decodeCbor, parseApiPublicKey } from './users.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('decodeCbor', () => {
  it('decodes the RFC 8949 Appendix A examples it supports', () => {
    expect(decodeCbor(Buffer.from('00', 'hex')).value).toBe(0);
    expect(decodeCbor(Buffer.from('1903e8', 'hex')).value).toBe(1000);
    expect(decodeCbor(Buffer.from('3903e7', 'hex')).value).toBe(-1000);
    expect(decodeCbor(Buffer.from('1bffffffffffffffff', 'hex')).value).toBe(18446744073709551615n);
    expect(decodeCbor(Buffer.from('6449455446', 'hex')).value).toBe('IETF');
    expect(decodeCbor(Buffer.from('4401020304', 'hex')).value).toEqual(Uint8Array.of(1, 2, 3, 4));
    expect(decodeCbor(Buffer.from('83010203', 'hex')).value).toEqual([1, 2, 3]);
    expect(decodeCbor(Buffer.from('a201020304', 'hex')).value).toEqual(
      new Map([
        [1, 2],
        [3, 4],
      ]),
    );
    expect(decodeCbor(Buffer.from('f5', 'hex')).value).toBe(true);
  });

  it('refuses indefinite lengths, tags, floats and truncated input', () => {
    for (const h of ['5f42010243030405ff', 'c11a514b67b0', 'f93c00', '1903', '62e6'])
      expect(() => decodeCbor(Buffer.from(h, 'hex'))).toThrow(Error);
  });

  it('random bytes never crash the decoder with anything but an Error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          decodeCbor(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(Error);
        }
      }),
    );
  });
});

describe('parseApiPublicKey', () => {
  it('accepts compressed P-256 and secp256k1 points and raw ed25519 keys, lower-cased', () => {
    const p = p256.getPublicKey(p256.utils.randomSecretKey(), true);
    expect(parseApiPublicKey(hex(p).toUpperCase(), 'API_KEY_CURVE_P256', 'f')).toBe(hex(p));
    const e = ed25519.getPublicKey(ed25519.utils.randomSecretKey());
    expect(parseApiPublicKey(hex(e), 'API_KEY_CURVE_ED25519', 'f')).toBe(hex(e));
  });

  it('refuses uncompressed keys, off-curve points and wrong lengths, naming the field', () => {
    const sk = p256.utils.randomSecretKey();
    for (const bad of [hex(p256.getPublicKey(sk, false)), `02${'ff'.repeat(32)}`, 'abcd'])
      expect(() => parseApiPublicKey(bad, 'API_KEY_CURVE_P256', 'parameters.apiKeys.0.publicKey')).toThrow(
        /parameters\.apiKeys\.0\.publicKey/,
      );
    expect(() => parseApiPublicKey(hex(p256.getPublicKey(sk, true)), 'API_KEY_CURVE_ED25519', 'f')).toThrow(
      CountersignError,
    );
  });
});
