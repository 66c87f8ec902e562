/**
 * The Ed25519 keys that sign webhook deliveries (turnkey-api.md 11.1): sealed by the key vault at
 * rest (AAD = the key id), the newest unretired one signs, and every key that may still be in a
 * receiver's hands is published as a JWKS at `/public/v1/discovery/webhooks/jwks`. Rotation adds a
 * key and retires the others; a retired key stays published for a grace period.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { CountersignError } from '../../shared/errors.js';
import { bytesToHex, hexToBytes, utf8, concatBytes, zeroize } from '../../shared/encoding.js';
import { publicKeyOf, signEd25519, type KeyVault } from '../keys/index.js';
import type { Store, WebhookSigningKeyRecord } from '../store/types.js';

/** A retired key stays in the JWKS this long, so a receiver's cached set still verifies. */
export const RETIRED_KEY_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/** The JWKS path; unauthenticated and cacheable (served like `/public/v1/discovery/keys`). */
export const WEBHOOK_JWKS_PATH = '/public/v1/discovery/webhooks/jwks';

export interface WebhookJwk {
  readonly kid: string;
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly alg: 'EdDSA';
  readonly use: 'sig';
  /** RFC 8037: the raw public key, base64url without padding. */
  readonly x: string;
  readonly turnkey_signature_algorithm: 'ed25519';
  readonly turnkey_signature_version: 'v1';
}

/** A fresh key, sealed; its id has no `.` (it is a field of the dot-separated signed input). */
export function generateWebhookSigningKey(vault: KeyVault, nowMs: number): WebhookSigningKeyRecord {
  const id = `whsk_${randomBytes(12).toString('hex')}`;
  const seed = new Uint8Array(randomBytes(32));
  try {
    return {
      id,
      publicKey: bytesToHex(publicKeyOf('CURVE_ED25519', seed)),
      sealedKey: vault.seal(seed, id),
      createdAtMs: nowMs,
      retiredAtMs: null,
    };
  } finally {
    zeroize(seed);
  }
}

/** The key that signs now: the newest unretired one. */
export function activeWebhookKey(
  keys: readonly WebhookSigningKeyRecord[],
): WebhookSigningKeyRecord | undefined {
  let best: WebhookSigningKeyRecord | undefined;
  for (const k of keys)
    if (k.retiredAtMs === null && (best === undefined || k.createdAtMs >= best.createdAtMs)) best = k;
  return best;
}

/** Creates the first signing key if there is none (first start, or a data dir from before webhooks). */
export async function ensureWebhookSigningKey(
  store: Store,
  vault: KeyVault,
  logger: Logger,
): Promise<WebhookSigningKeyRecord> {
  const existing = activeWebhookKey(await store.listWebhookSigningKeys());
  if (existing !== undefined) return existing;
  const fresh = generateWebhookSigningKey(vault, Date.now());
  await store.write(async (tx) => await tx.insertWebhookSigningKey(fresh));
  logger.info({ keyId: fresh.id }, 'created a webhook signing key');
  return fresh;
}

/** Adds a new signing key and retires the others (they stay published for RETIRED_KEY_GRACE_MS). */
export async function rotateWebhookSigningKey(
  store: Store,
  vault: KeyVault,
  nowMs: number = Date.now(),
): Promise<WebhookSigningKeyRecord> {
  const fresh = generateWebhookSigningKey(vault, nowMs);
  await store.write(async (tx) => {
    await tx.insertWebhookSigningKey(fresh);
    await tx.retireWebhookSigningKeys(fresh.id, nowMs);
  });
  return fresh;
}

/** The published set: unretired keys and keys retired within the grace period, oldest first. */
export function webhookJwks(keys: readonly WebhookSigningKeyRecord[], nowMs: number): { keys: WebhookJwk[] } {
  return {
    keys: keys
      .filter((k) => k.retiredAtMs === null || nowMs - k.retiredAtMs < RETIRED_KEY_GRACE_MS)
      .map((k) => ({
        kid: k.id,
        kty: 'OKP',
        crv: 'Ed25519',
        alg: 'EdDSA',
        use: 'sig',
        x: Buffer.from(hexToBytes(k.publicKey, 'publicKey')).toString('base64url'),
        turnkey_signature_algorithm: 'ed25519',
        turnkey_signature_version: 'v1',
      })),
  };
}

/**
 * Opens the sealed key once and checks it against its public key (when the dispatcher loads a key):
 * a wrong master key or a swapped row fails here, not at every receiver.
 */
export function verifyWebhookSigningKey(vault: KeyVault, key: WebhookSigningKeyRecord): void {
  const seed = vault.open(key.sealedKey, key.id);
  try {
    if (bytesToHex(publicKeyOf('CURVE_ED25519', seed)) !== key.publicKey)
      throw new CountersignError(
        'KEY_MATERIAL_UNAVAILABLE',
        `webhook signing key ${key.id} does not match its public key`,
      );
  } finally {
    zeroize(seed);
  }
}

/**
 * The v1 signature of one attempt: Ed25519 over `v1.ed25519.<keyId>.<timestampMs>.<eventId>.`
 * followed by the exact body bytes; lower-case hex of the 64-byte signature. Opens the sealed key
 * for this signature only and zeroes it after (the key was checked by verifyWebhookSigningKey).
 */
export function signWebhook(input: {
  readonly vault: KeyVault;
  readonly key: WebhookSigningKeyRecord;
  readonly timestampMs: string;
  readonly eventId: string;
  readonly body: Uint8Array;
}): string {
  const { key } = input;
  const seed = input.vault.open(key.sealedKey, key.id);
  try {
    const prefix = utf8(`v1.ed25519.${key.id}.${input.timestampMs}.${input.eventId}.`);
    const sig = signEd25519(seed, concatBytes(prefix, input.body));
    return bytesToHex(concatBytes(sig.r, sig.s));
  } finally {
    zeroize(seed);
  }
}
