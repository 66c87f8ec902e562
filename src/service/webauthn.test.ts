import { createHash, randomBytes } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { describe, expect, it } from 'vitest';
import { noneAttestationObject } from '../../test/helpers/passkey.js';
import { readRegistration, rpIdsFor, verifyAssertion, WebauthnError } from './webauthn.js';

const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest();

/**
 * A software authenticator registering at `origin` with rpId `rpId` (fmt none), with a fresh ES256
 * key or the given `coseKey`.
 */
function register(origin: string, rpId: string, coseKey?: Uint8Array) {
  const secret = p256.utils.randomSecretKey();
  const pub = p256.getPublicKey(secret, false);
  const credentialId = randomBytes(16);
  const challenge = randomBytes(32).toString('base64url');
  const cose =
    coseKey ??
    isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, pub.slice(1, 33)],
        [-3, pub.slice(33)],
      ]),
    );
  const attestationObject = noneAttestationObject(rpId, credentialId, cose);
  const clientDataJson = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin }));
  return { secret, credentialId, challenge, attestationObject, clientDataJson };
}

function assertion(secret: Uint8Array, credentialId: Buffer, body: string, origin: string, rpId: string) {
  const challenge = Buffer.from(sha(body).toString('hex')).toString('base64url');
  const clientDataJson = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin }));
  const authenticatorData = Buffer.concat([sha(rpId), Buffer.from([0x05, 0, 0, 0, 1])]);
  const signature = p256.sign(Buffer.concat([authenticatorData, sha(clientDataJson)]), secret, {
    prehash: true,
    format: 'der',
  });
  return { credentialId: credentialId.toString('base64url'), authenticatorData, clientDataJson, signature };
}

describe('webauthn', () => {
  it('rpIds of an origin are its host and parent domains, none for an IP address', () => {
    expect(rpIdsFor('https://a.b.example.com')).toEqual(['a.b.example.com', 'b.example.com', 'example.com']);
    expect(rpIdsFor('http://localhost:8080')).toEqual(['localhost']);
    expect(rpIdsFor('http://127.0.0.1:8080')).toEqual([]);
  });

  it('registers at a parent-domain rpId and verifies an assertion over the body', async () => {
    const r = register('https://console.example.com', 'example.com');
    const cred = readRegistration(r, { origins: ['https://console.example.com'] });
    expect(cred.fault).toBeUndefined();
    const body = '{"organizationId":"x"}';
    const a = assertion(r.secret, r.credentialId, body, 'https://console.example.com', 'example.com');
    await verifyAssertion(a, new TextEncoder().encode(body), cred.publicKey);
    // Another body, another origin than configured, an rpId that is not the origin's: refused.
    await expect(verifyAssertion(a, new TextEncoder().encode('{}'), cred.publicKey)).rejects.toThrow();
    await expect(
      verifyAssertion(a, new TextEncoder().encode(body), cred.publicKey, {
        origins: ['https://other.example'],
      }),
    ).rejects.toThrow(/not one this service accepts/);
    const wrongRp = assertion(r.secret, r.credentialId, body, 'https://console.example.com', 'evil.com');
    await expect(verifyAssertion(wrongRp, new TextEncoder().encode(body), cred.publicKey)).rejects.toThrow();
  });

  it('refuses a registration from an origin the policy does not list, or whose rpId is not its host', () => {
    const r = register('https://elsewhere.example', 'elsewhere.example');
    expect(() => readRegistration(r, { origins: ['https://console.example.com'] })).toThrow(
      /not one this service accepts/,
    );
    const mismatched = register('https://console.example.com', 'evil.com');
    expect(() => readRegistration(mismatched)).toThrow(/rpIdHash/);
  });

  it('refuses a credential public key that is a CBOR item other than a map, as a WebauthnError', () => {
    for (const item of [new Uint8Array(33), 5, 'key', [1, 2, 3]]) {
      const r = register('https://example.com', 'example.com', isoCBOR.encode(item as never));
      expect(() => readRegistration(r)).toThrow(WebauthnError);
      expect(() => readRegistration(r)).toThrow(/not a COSE_Key/);
    }
  });
});
