import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import vectors from '../../../test/vectors/keys/ed25519-rfc8032.json' with { type: 'json' };
import { bytesToHex, concatBytes, hexToBytes } from '../../shared/encoding.js';
import { generatePrivateKey, publicKeyOf, signEd25519 } from './index.js';

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

describe('signEd25519', () => {
  for (const v of vectors.valid) {
    it(`matches RFC 8032 ${v.name}`, () => {
      const key = hexToBytes(v.secretKey, 'v');
      expect(bytesToHex(publicKeyOf('CURVE_ED25519', key))).toBe(v.publicKey);
      const sig = signEd25519(key, hexToBytes(v.message, 'v'));
      expect(bytesToHex(concatBytes(sig.r, sig.s))).toBe(v.signature);
      expect(sig.v).toBe(0);
    });
  }

  it('verifies with node:crypto for random keys and messages', () => {
    for (let i = 0; i < 50; i++) {
      const key = generatePrivateKey('CURVE_ED25519');
      const msg = Uint8Array.from(randomBytes(i * 7));
      const sig = signEd25519(key, msg);
      const pub = createPublicKey({
        key: Buffer.concat([SPKI_ED25519_PREFIX, publicKeyOf('CURVE_ED25519', key)]),
        format: 'der',
        type: 'spki',
      });
      expect(verify(null, msg, pub, concatBytes(sig.r, sig.s))).toBe(true);
    }
  });
});
