import { createECDH, createPublicKey, randomBytes, verify } from 'node:crypto';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../shared/errors.js';
import { ApiKeyStamper } from './stamper.js';

function newApiKey(): { apiPublicKey: string; apiPrivateKey: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    apiPublicKey: ecdh.getPublicKey('hex', 'compressed'),
    apiPrivateKey: ecdh.getPrivateKey().toString('hex').padStart(64, '0'),
  };
}

interface DecodedStamp {
  publicKey: string;
  scheme: string;
  signature: string;
}

function decodeStamp(value: string): DecodedStamp {
  expect(value).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
  return JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as DecodedStamp;
}

function verifyStamp(stamp: DecodedStamp, body: Uint8Array): boolean {
  // A compressed SEC1 point wrapped in a P-256 SubjectPublicKeyInfo prefix.
  const spki = Buffer.concat([
    Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex'),
    Buffer.from(stamp.publicKey, 'hex'),
  ]);
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(stamp.signature, 'hex'));
}

describe('ApiKeyStamper', () => {
  it('produces a stamp that verifies with node:crypto over the exact body bytes', () => {
    const key = newApiKey();
    const stamper = new ApiKeyStamper(key);
    const body = new TextEncoder().encode('{"type":"ACTIVITY_TYPE_SIGN_RAW_PAYLOADS","timestampMs":"1"}');
    const stamp = decodeStamp(stamper.stamp(body));
    expect(stamp.publicKey).toBe(key.apiPublicKey);
    expect(stamp.scheme).toBe('SIGNATURE_SCHEME_TK_API_P256');
    expect(stamp.signature).toMatch(/^30[0-9a-f]+$/);
    expect(verifyStamp(stamp, body)).toBe(true);
    const other = new TextEncoder().encode('{"type":"ACTIVITY_TYPE_SIGN_RAW_PAYLOADS","timestampMs":"2"}');
    expect(verifyStamp(stamp, other)).toBe(false);
  });

  it('has the same shape as @turnkey/api-key-stamper and both verify over the same body', async () => {
    const key = newApiKey();
    const bodyText = JSON.stringify({ organizationId: 'org', nonce: randomBytes(8).toString('hex') });
    const body = new TextEncoder().encode(bodyText);
    const ours = decodeStamp(new ApiKeyStamper(key).stamp(body));
    const theirsHeader = await new TurnkeyApiKeyStamper(key).stamp(bodyText);
    expect(theirsHeader.stampHeaderName).toBe('X-Stamp');
    const theirs = decodeStamp(theirsHeader.stampHeaderValue);
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect(ours.publicKey).toBe(theirs.publicKey);
    expect(ours.scheme).toBe(theirs.scheme);
    expect(verifyStamp(theirs, body)).toBe(true);
    expect(verifyStamp(ours, body)).toBe(true);
  });

  it('accepts upper-case hex and emits the public key in lower case', () => {
    const key = newApiKey();
    const stamper = new ApiKeyStamper({
      apiPublicKey: key.apiPublicKey.toUpperCase(),
      apiPrivateKey: key.apiPrivateKey.toUpperCase(),
    });
    expect(decodeStamp(stamper.stamp(new Uint8Array([1]))).publicKey).toBe(key.apiPublicKey);
  });

  it('refuses a public key that does not belong to the private key with CONFIG_INVALID', () => {
    const a = newApiKey();
    const b = newApiKey();
    expect(() => new ApiKeyStamper({ apiPublicKey: b.apiPublicKey, apiPrivateKey: a.apiPrivateKey })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', field: 'apiPublicKey' }),
    );
  });

  it('refuses malformed keys without echoing the private key', () => {
    const a = newApiKey();
    const cases = [
      { apiPublicKey: a.apiPublicKey.slice(2), apiPrivateKey: a.apiPrivateKey },
      { apiPublicKey: `04${a.apiPublicKey.slice(2)}`, apiPrivateKey: a.apiPrivateKey },
      { apiPublicKey: a.apiPublicKey, apiPrivateKey: a.apiPrivateKey.slice(1) },
      { apiPublicKey: a.apiPublicKey, apiPrivateKey: '0'.repeat(64) },
      { apiPublicKey: a.apiPublicKey, apiPrivateKey: 'zz'.repeat(32) },
    ];
    for (const c of cases) {
      let caught: unknown;
      try {
        new ApiKeyStamper(c);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(CountersignError);
      expect((caught as CountersignError).code).toBe('CONFIG_INVALID');
      expect((caught as CountersignError).message).not.toContain(a.apiPrivateKey);
    }
  });
});
