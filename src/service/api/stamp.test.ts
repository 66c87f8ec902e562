import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { P256Verifier } from './p256Verifier.js';
import { verifyApiKeyStamp, verifyApiKeyStampOffThread, type ApiKeyStamp } from './stamp.js';

/** A P-256 API key and a stamp of `body` made with it, as a Turnkey client makes one. */
function stamped(body: Uint8Array): { stamp: ApiKeyStamp; otherKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const uncompressed = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x as string, 'base64url'),
    Buffer.from(jwk.y as string, 'base64url'),
  ]);
  const compressed = Buffer.concat([
    Buffer.from([(uncompressed[64] as number) & 1 ? 3 : 2]),
    uncompressed.subarray(1, 33),
  ]);
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const otherY = Buffer.from(other.y as string, 'base64url');
  const otherKey = Buffer.concat([
    Buffer.from([(otherY[31] as number) & 1 ? 3 : 2]),
    Buffer.from(other.x as string, 'base64url'),
  ]).toString('hex');
  return {
    stamp: {
      kind: 'api_key',
      publicKey: compressed.toString('hex'),
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      signature: sign('sha256', body, { key: privateKey, dsaEncoding: 'der' }).toString('hex'),
    },
    otherKey,
  };
}

const body = new TextEncoder().encode('{"type":"ACTIVITY_TYPE_SIGN_TRANSACTION_V2","timestampMs":"1"}');

const verifier = new P256Verifier();
afterAll(() => verifier.close());

describe.each([
  ['on the thread pool', undefined],
  ['in batches on the verifier thread', verifier],
])('API-key stamp checked %s', (_where, batched) => {
  it('accepts what the inline check accepts', async () => {
    const { stamp } = stamped(body);
    expect(() => verifyApiKeyStamp(stamp, body)).not.toThrow();
    await expect(verifyApiKeyStampOffThread(stamp, body, batched)).resolves.toBeUndefined();
  });

  it('refuses another body, another key and a malformed key as the inline check does', async () => {
    const { stamp, otherKey } = stamped(body);
    const tampered = new TextEncoder().encode(
      '{"type":"ACTIVITY_TYPE_SIGN_TRANSACTION_V2","timestampMs":"2"}',
    );
    for (const [s, b, code] of [
      [stamp, tampered, 'STAMP_INVALID_SIGNATURE'],
      [{ ...stamp, publicKey: otherKey }, body, 'STAMP_INVALID_SIGNATURE'],
      [{ ...stamp, signature: '3006020101020101' }, body, 'STAMP_INVALID_SIGNATURE'],
      [{ ...stamp, publicKey: `04${'ab'.repeat(32)}` }, body, 'STAMP_MALFORMED'],
    ] as const) {
      expect(() => verifyApiKeyStamp(s, b)).toThrow(expect.objectContaining({ code }));
      await expect(verifyApiKeyStampOffThread(s, b, batched)).rejects.toMatchObject({ code });
    }
  });
});
