/**
 * `GET /public/v1/discovery/keys` (issue 10): the service's public keys, unauthenticated and
 * cacheable, named after the @turnkey/crypto overrides they feed; with them @turnkey/crypto opens our
 * export bundles and accepts our session JWTs.
 */
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import {
  decryptExportBundle,
  generateP256KeyPair,
  verifyOtpVerificationToken,
  verifySessionJwtSignature,
} from '@turnkey/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiKey } from './helpers/api-key.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { serviceVerificationToken } from './helpers/verification.js';

describe('discovery keys', () => {
  let h: EmbeddedHarness;
  let api: TurnkeyClient;
  let keys: Record<string, string>;

  beforeAll(async () => {
    h = await startEmbedded();
    api = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(h.service.credentials));
    const res = await fetch(`${h.baseUrl}/public/v1/discovery/keys`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    keys = (await res.json()) as Record<string, string>;
  });
  afterAll(() => h?.close());

  it('publishes distinct uncompressed P-256 keys without a stamp (the app-proof key is two of them)', () => {
    expect(Object.keys(keys).sort()).toEqual(
      [
        'appProofPublicKey',
        'notarizerPublicKey',
        'onRampEncryptionPublicKey',
        'signerPublicKey',
        'tlsFetcherEncryptPublicKey',
      ].sort(),
    );
    const { appProofPublicKey, ...single } = keys;
    for (const v of Object.values(single)) expect(v).toMatch(/^04[0-9a-f]{128}$/);
    // Encryption ‖ signing, as Turnkey's app proofs carry an enclave's key pair.
    expect(appProofPublicKey).toMatch(/^04[0-9a-f]{128}04[0-9a-f]{128}$/);
    const all = [...Object.values(single), appProofPublicKey!.slice(0, 130), appProofPublicKey!.slice(130)];
    expect(new Set(all).size).toBe(6);
  });

  it('opens an export bundle with signerPublicKey as the override', async () => {
    const target = generateP256KeyPair();
    const org = h.service.credentials.organizationId;
    const res = await api.exportWallet({
      type: 'ACTIVITY_TYPE_EXPORT_WALLET',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { walletId: h.service.credentials.walletId, targetPublicKey: target.publicKeyUncompressed },
    });
    const mnemonic = await decryptExportBundle({
      exportBundle: String(res.activity.result.exportWalletResult?.exportBundle),
      embeddedKey: target.privateKey,
      organizationId: org,
      returnMnemonic: true,
      dangerouslyOverrideSignerPublicKey: keys.signerPublicKey!,
    });
    expect(mnemonic.split(' ')).toHaveLength(12);
  });

  it('signs session JWTs with notarizerPublicKey', async () => {
    const session = newApiKey();
    const res = await api.stampLogin({
      type: 'ACTIVITY_TYPE_STAMP_LOGIN',
      timestampMs: String(Date.now()),
      organizationId: h.service.credentials.organizationId,
      parameters: { publicKey: session.apiPublicKey },
    });
    const jwt = String(res.activity.result.stampLoginResult?.session);
    expect(await verifySessionJwtSignature(jwt, keys.notarizerPublicKey)).toBe(true);
    expect(await verifySessionJwtSignature(jwt, keys.signerPublicKey)).toBe(false);
  });

  it("verifyOtpVerificationToken accepts the service's verification tokens with signerPublicKey", async () => {
    const clientKey = generateP256KeyPair();
    const token = await serviceVerificationToken(h, {
      contact: 'otp@example.com',
      organizationId: h.service.credentials.organizationId,
      publicKey: clientKey.publicKey,
    });
    const claims = await verifyOtpVerificationToken(token, keys.signerPublicKey);
    expect(claims).toMatchObject({ contact: 'otp@example.com', verification_type: 'OTP_TYPE_EMAIL' });
    await expect(verifyOtpVerificationToken(token, keys.notarizerPublicKey)).rejects.toThrow(
      /signature is invalid/,
    );
  });
});
