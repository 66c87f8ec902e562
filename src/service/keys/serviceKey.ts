/**
 * The wallet service's own P-256 signing key. It signs what the service vouches for (export bundles:
 * Turnkey's "enclave quorum" signature, turnkey-api.md 9.5); its uncompressed public key is published
 * so clients can pin it (e.g. @turnkey/crypto's `dangerouslyOverrideSignerPublicKey`). At rest it is
 * sealed by the key vault like every other key.
 */
import { p256 } from '@noble/curves/nist.js';
import { bytesToHex, hexToBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import type { KeyVault } from './KeyVault.js';

/** The vault record id (and AAD) of the export-bundle signing key (also signs verification tokens). */
export const SERVICE_SIGNER_KEY_ID = 'service-signer-p256';
/** Signs session JWTs (@turnkey/crypto's notarizer key). */
export const SERVICE_NOTARIZER_KEY_ID = 'service-notarizer-p256';
/** The key clients encrypt OTP bundles to (@turnkey/crypto's TLS-fetcher encryption key). */
export const SERVICE_TLS_FETCHER_KEY_ID = 'service-tls-fetcher-p256';
/** The key clients encrypt on-ramp credentials to. */
export const SERVICE_ONRAMP_KEY_ID = 'service-onramp-p256';

/** Signs app proofs (the signing half of Turnkey's enclave "ephemeral key"). */
export const SERVICE_APP_PROOF_SIGN_KEY_ID = 'service-app-proof-sign-p256';
/** The encryption half app proofs carry beside the signing key (nothing is decrypted with it yet). */
export const SERVICE_APP_PROOF_ENCRYPT_KEY_ID = 'service-app-proof-encrypt-p256';

/** Every service key, each created on first start and published by `GET /public/v1/discovery/keys`. */
export const SERVICE_KEY_IDS = [
  SERVICE_SIGNER_KEY_ID,
  SERVICE_NOTARIZER_KEY_ID,
  SERVICE_TLS_FETCHER_KEY_ID,
  SERVICE_ONRAMP_KEY_ID,
  SERVICE_APP_PROOF_SIGN_KEY_ID,
  SERVICE_APP_PROOF_ENCRYPT_KEY_ID,
] as const;

export interface SealedServiceKey {
  readonly id: string;
  /** Uncompressed SEC1 public key, lower-case hex (130 digits, `04…`). */
  readonly publicKey: string;
  readonly sealedKey: Uint8Array;
}

/** A fresh P-256 key, sealed under `id`; the plaintext scalar is zeroed before returning. */
export function generateServiceKey(vault: KeyVault, id: string = SERVICE_SIGNER_KEY_ID): SealedServiceKey {
  const secret = p256.utils.randomSecretKey();
  try {
    return { id, publicKey: bytesToHex(p256.getPublicKey(secret, false)), sealedKey: vault.seal(secret, id) };
  } finally {
    zeroize(secret);
  }
}

/**
 * ECDSA P-256 over SHA-256(`message`), DER-encoded, low-S. Opens the sealed key, checks it still
 * matches its recorded public key (a wrong master key or swapped row fails here, not at the client),
 * signs, and zeroes the scalar.
 */
export function signWithServiceKey(input: {
  readonly vault: KeyVault;
  readonly key: SealedServiceKey;
  readonly message: Uint8Array;
}): Uint8Array {
  return withServiceKey(input.vault, input.key, (secret) =>
    p256.sign(input.message, secret, { prehash: true, lowS: true, format: 'der' }),
  );
}

/**
 * Runs `use` with the opened scalar (checked against its public key) and zeroes it after, for a
 * caller that signs several messages or wants another encoding than {@link signWithServiceKey}'s.
 */
export function withServiceKey<T>(vault: KeyVault, key: SealedServiceKey, use: (secret: Uint8Array) => T): T {
  const secret = vault.open(key.sealedKey, key.id);
  try {
    assertServiceKeyMatches(secret, key.publicKey);
    return use(secret);
  } finally {
    zeroize(secret);
  }
}

/** Opens the sealed key once and checks it against its public key (run at startup). */
export function verifyServiceKey(vault: KeyVault, key: SealedServiceKey): void {
  withServiceKey(vault, key, () => undefined);
}

function assertServiceKeyMatches(secret: Uint8Array, publicKeyHex: string): void {
  if (!p256.utils.isValidSecretKey(secret))
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'service signing key is not a valid P-256 scalar');
  const expected = hexToBytes(publicKeyHex, 'serviceKey.publicKey');
  const actual = p256.getPublicKey(secret, false);
  if (bytesToHex(actual) !== bytesToHex(expected))
    throw new CountersignError(
      'KEY_MATERIAL_UNAVAILABLE',
      'service signing key does not match its public key',
    );
}
