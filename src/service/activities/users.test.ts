import { p256 } from '@noble/curves/nist.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { parseApiPublicKey, parseAttestation } from './users.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('parseAttestation', () => {
  const clientDataJson = Buffer.from(
    JSON.stringify({ type: 'webauthn.create', challenge: 'abc', origin: 'http://localhost' }),
  ).toString('base64url');
  it('random attestation objects are refused with a field error, never a crash', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (bytes) => {
        try {
          parseAttestation(
            {
              challenge: 'abc',
              attestation: {
                credentialId: 'AAAA',
                clientDataJson,
                attestationObject: Buffer.from(bytes).toString('base64url'),
              },
            },
            'p',
          );
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
          expect((e as CountersignError).message).toMatch(/^p\.attestation\./);
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
