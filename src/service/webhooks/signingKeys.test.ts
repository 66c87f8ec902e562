import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyTurnkeyWebhookSignature } from '@turnkey/crypto';
import { KeyVault } from '../keys/index.js';
import {
  RETIRED_KEY_GRACE_MS,
  activeWebhookKey,
  generateWebhookSigningKey,
  signWebhook,
  verifyWebhookSigningKey,
  webhookJwks,
} from './signingKeys.js';

const vault = new KeyVault(new Uint8Array(randomBytes(32)));

describe('webhook signing keys', () => {
  it('signs the v1 input so that @turnkey/crypto verifies it with the published key', () => {
    const key = generateWebhookSigningKey(vault, 1);
    expect(key.id).not.toContain('.');
    const body = new TextEncoder().encode('{"id":"x","status":"ACTIVITY_STATUS_COMPLETED"}');
    const timestampMs = String(Date.now());
    const eventId = randomUUID();
    const signature = signWebhook({ vault, key, timestampMs, eventId, body });
    const [jwk] = webhookJwks([key], 2).keys;
    const headers = {
      'x-turnkey-timestamp': timestampMs,
      'x-turnkey-event-id': eventId,
      'x-turnkey-signature-key-id': key.id,
      'x-turnkey-signature-algorithm': 'ed25519',
      'x-turnkey-signature-version': 'v1',
      'x-turnkey-signature': signature,
    };
    const verificationKeys = [
      { keyId: jwk!.kid, publicKey: Buffer.from(jwk!.x, 'base64url').toString('hex') },
    ];
    expect(
      verifyTurnkeyWebhookSignature({ headers, body, verificationKeys, maxTimestampAgeMs: 60_000 }),
    ).toMatchObject({
      ok: true,
      eventId,
    });
    // Another event id, or one more byte, and it no longer verifies.
    expect(
      verifyTurnkeyWebhookSignature({
        headers: { ...headers, 'x-turnkey-event-id': randomUUID() },
        body,
        verificationKeys,
        maxTimestampAgeMs: 60_000,
      }).ok,
    ).toBe(false);
    expect(
      verifyTurnkeyWebhookSignature({
        headers,
        body: new Uint8Array([...body, 32]),
        verificationKeys,
        maxTimestampAgeMs: 60_000,
      }).ok,
    ).toBe(false);
  });

  it('publishes Ed25519 JWKs and keeps a retired key for the grace period only', () => {
    const old = { ...generateWebhookSigningKey(vault, 1), retiredAtMs: 1_000 };
    const current = generateWebhookSigningKey(vault, 2);
    expect(activeWebhookKey([old, current])?.id).toBe(current.id);
    const now = 1_000 + RETIRED_KEY_GRACE_MS - 1;
    expect(webhookJwks([old, current], now).keys.map((k) => k.kid)).toEqual([old.id, current.id]);
    expect(webhookJwks([old, current], now + 1).keys.map((k) => k.kid)).toEqual([current.id]);
    expect(webhookJwks([current], 0).keys[0]).toEqual({
      kid: current.id,
      kty: 'OKP',
      crv: 'Ed25519',
      alg: 'EdDSA',
      use: 'sig',
      x: Buffer.from(current.publicKey, 'hex').toString('base64url'),
      turnkey_signature_algorithm: 'ed25519',
      turnkey_signature_version: 'v1',
    });
  });

  it('refuses a key whose sealed half does not match its public key', () => {
    const a = generateWebhookSigningKey(vault, 1);
    const b = generateWebhookSigningKey(vault, 1);
    expect(() => verifyWebhookSigningKey(vault, a)).not.toThrow();
    expect(() => verifyWebhookSigningKey(vault, { ...a, publicKey: b.publicKey })).toThrow(/does not match/);
  });
});
