import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { describe, expect, it } from 'vitest';
import vectors from '../../../test/vectors/keys/ecdsa-p256-rfc6979.json' with { type: 'json' };
import {
  bigintToFixed,
  bytesToBigint,
  bytesToHex,
  concatBytes,
  hexToBytes,
  utf8,
} from '../../shared/encoding.js';
import { generatePrivateKey, publicKeyOf, signEcdsaP256 } from './index.js';

const N = p256.Point.Fn.ORDER;

function nodeVerify(pub33: Uint8Array, message: Uint8Array, r: Uint8Array, s: Uint8Array): boolean {
  const full = p256.Point.fromBytes(pub33).toBytes(false);
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: Buffer.from(full.subarray(1, 33)).toString('base64url'),
      y: Buffer.from(full.subarray(33, 65)).toString('base64url'),
    },
    format: 'jwk',
  });
  return verify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, concatBytes(r, s));
}

describe('signEcdsaP256', () => {
  it('gives the RFC 6979 A.2.5 signature with s normalized to the low half', () => {
    for (const v of vectors.valid) {
      const key = hexToBytes(v.privateKey, 'v');
      const digest = createHash('sha256').update(v.message).digest();
      const sig = signEcdsaP256(key, digest);
      expect(bytesToHex(sig.r)).toBe(v.r);
      const s = bytesToBigint(hexToBytes(v.s, 'v'));
      expect(bytesToHex(sig.s)).toBe(bytesToHex(bigintToFixed(s > N / 2n ? N - s : s, 32)));
      expect(bytesToHex(p256.Point.fromBytes(publicKeyOf('CURVE_P256', key)).toBytes(false))).toBe(
        v.publicKeyUncompressed,
      );
    }
  });

  it('verifies with node:crypto, is low-S, and v recovers the signer', () => {
    for (let i = 0; i < 100; i++) {
      const key = generatePrivateKey('CURVE_P256');
      const pub = publicKeyOf('CURVE_P256', key);
      const message = utf8(`message ${i} ${randomBytes(8).toString('hex')}`);
      const digest = createHash('sha256').update(message).digest();
      const sig = signEcdsaP256(key, digest);
      expect(sig.r).toHaveLength(32);
      expect(sig.s).toHaveLength(32);
      expect(bytesToBigint(sig.s) <= N / 2n).toBe(true);
      expect(nodeVerify(pub, message, sig.r, sig.s)).toBe(true);
      const recovered = p256.Signature.fromBytes(concatBytes(Uint8Array.of(sig.v), sig.r, sig.s), 'recovered')
        .recoverPublicKey(digest)
        .toBytes(true);
      expect(bytesToHex(recovered)).toBe(bytesToHex(pub));
    }
  });

  it('rejects a digest that is not 32 bytes', () => {
    expect(() => signEcdsaP256(generatePrivateKey('CURVE_P256'), new Uint8Array(20))).toThrow(
      expect.objectContaining({ code: 'PAYLOAD_INVALID' }),
    );
  });
});
