import { createHash, createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { utf8 } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { KeyVault } from './KeyVault.js';
import { generateServiceKey, signWithServiceKey, verifyServiceKey } from './serviceKey.js';

const vault = () => new KeyVault(new Uint8Array(32).fill(9));

function nodeVerify(publicKeyHex: string, message: Uint8Array, der: Uint8Array): boolean {
  const pub = Buffer.from(publicKeyHex, 'hex');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: pub.subarray(1, 33).toString('base64url'),
      y: pub.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  return verify('sha256', message, key, der);
}

describe('generateServiceKey / signWithServiceKey', () => {
  it('signs DER ECDSA P-256 over SHA-256 of the message, verifiable with the published uncompressed key', () => {
    const v = vault();
    const key = generateServiceKey(v);
    expect(key.publicKey).toMatch(/^04[0-9a-f]{128}$/);
    const message = utf8('{"encappedPublic":"04…","ciphertext":"…","organizationId":"o"}');
    const der = signWithServiceKey({ vault: v, key, message });
    expect(der[0]).toBe(0x30);
    expect(nodeVerify(key.publicKey, message, der)).toBe(true);
    // What @turnkey/crypto checks: the signature over sha256(data) with prehash off.
    const digest = createHash('sha256').update(message).digest();
    expect(
      p256.verify(der, digest, Buffer.from(key.publicKey, 'hex'), { prehash: false, format: 'der' }),
    ).toBe(true);
    expect(nodeVerify(key.publicKey, utf8('other'), der)).toBe(false);
  });

  it('refuses to sign under another master key', () => {
    const key = generateServiceKey(vault());
    const other = new KeyVault(new Uint8Array(32).fill(1));
    expect(() => signWithServiceKey({ vault: other, key, message: utf8('m') })).toThrow(CountersignError);
    expect(() => verifyServiceKey(other, key)).toThrow(CountersignError);
  });

  it('refuses a sealed key whose recorded public key is another one', () => {
    const v = vault();
    const key = generateServiceKey(v);
    const swapped = { ...key, publicKey: generateServiceKey(v).publicKey };
    expect(() => verifyServiceKey(v, swapped)).toThrow(/does not match/);
  });
});
