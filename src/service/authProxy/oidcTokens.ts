/**
 * OIDC tokens as the service's activities see them (issue 13): the verifier of a service (one per
 * store, with the service's outbound policy), the audiences an organization accepts (the OAuth
 * client ids of its auth-proxy configuration, or of its parent's for a sub-organization), and the
 * tokens the service issues itself after an OAuth 2.0 code exchange (oauth2_authenticate), which
 * oauth_login accepts: standard ES256 JWTs signed by the service signer key, whose public key is
 * published at `/public/v1/discovery/keys`.
 */
import { createHash } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import type { JWK } from 'jose';
import { hexToBytes, utf8 } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import {
  SERVICE_SIGNER_KEY_ID,
  withServiceKey,
  type KeyVault,
  type SealedServiceKey,
} from '../keys/index.js';
import type { OrganizationRecord, Store } from '../store/types.js';
import { authContextOf } from './context.js';
import { OidcVerifier, type OidcClaims } from './oidc.js';
import { readSettings } from './settings.js';

/** The `iss` of tokens the service issues; a URN, so nothing ever tries to discover it. */
export const SERVICE_OIDC_ISSUER = 'urn:countersign:oauth2';
/** Lifetime of a service-issued OIDC token. */
export const SERVICE_OIDC_TOKEN_SECONDS = 600;

const VERIFIERS = new WeakMap<Store, OidcVerifier>();

/** The verifier of `store`'s service (created on first use with the service's outbound policy). */
export function oidcVerifierOf(store: Store): OidcVerifier {
  let v = VERIFIERS.get(store);
  if (v === undefined) {
    v = new OidcVerifier({ policy: authContextOf(store).policy });
    VERIFIERS.set(store, v);
  }
  return v;
}

/** Lower-case hex SHA-256 of the compressed public key's hex text (turnkey-api.md 9.3). */
export const nonceOf = (publicKeyHex: string): string =>
  createHash('sha256').update(publicKeyHex.toLowerCase(), 'utf8').digest('hex');

/** The client ids `org` accepts as `aud`: its own proxy configuration's, then its parent's. */
export async function oauthAudiences(store: Store, org: OrganizationRecord): Promise<string[]> {
  const out = new Set<string>();
  for (const id of [org.id, org.parentId]) {
    if (id === null) continue;
    const config = await store.getAuthProxyConfig(id);
    if (config === undefined) continue;
    const s = readSettings(config.settingsJson);
    for (const clientId of Object.values(s.oauthClientIds)) if (clientId !== '') out.add(clientId);
    for (const c of Object.values(s.oauth2Credentials)) out.add(c.clientId);
  }
  return [...out];
}

async function signerKey(store: Store): Promise<SealedServiceKey> {
  const k = await store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  if (k === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', `the service has no ${SERVICE_SIGNER_KEY_ID} key`);
  return k;
}

/** The service signer key as a JWK (uncompressed SEC1 hex → x, y). */
function signerJwk(key: SealedServiceKey): JWK {
  const pub = hexToBytes(key.publicKey, 'publicKey');
  return {
    kty: 'EC',
    crv: 'P-256',
    x: Buffer.from(pub.subarray(1, 33)).toString('base64url'),
    y: Buffer.from(pub.subarray(33, 65)).toString('base64url'),
    alg: 'ES256',
    use: 'sig',
    kid: SERVICE_SIGNER_KEY_ID,
  };
}

/**
 * Verifies an OIDC token for `org`: issued by its provider (or by this service), for one of the
 * org's client ids, unexpired, and, when `publicKey` is given, bound to it by the nonce.
 */
export async function verifyOrganizationOidcToken(input: {
  readonly store: Store;
  readonly organization: OrganizationRecord;
  readonly token: string;
  readonly field: string;
  readonly nowMs: number;
  readonly publicKey?: string | undefined;
}): Promise<OidcClaims> {
  const key = await signerKey(input.store);
  return oidcVerifierOf(input.store).verify({
    token: input.token,
    field: input.field,
    audiences: await oauthAudiences(input.store, input.organization),
    nonce: input.publicKey === undefined ? undefined : nonceOf(input.publicKey),
    nowMs: input.nowMs,
    localIssuers: new Map([[SERVICE_OIDC_ISSUER, signerJwk(key)]]),
  });
}

/** A standard ES256 OIDC token (RFC 7519, one SHA-256, r‖s) issued and signed by this service. */
export async function signServiceOidcToken(input: {
  readonly store: Store;
  readonly vault: KeyVault;
  readonly nowMs: number;
  readonly audience: string;
  readonly subject: string;
  readonly nonce: string;
}): Promise<string> {
  const key = await signerKey(input.store);
  const iat = Math.floor(input.nowMs / 1000);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signingInput = `${b64({ alg: 'ES256', typ: 'JWT', kid: SERVICE_SIGNER_KEY_ID })}.${b64({
    iss: SERVICE_OIDC_ISSUER,
    aud: input.audience,
    sub: input.subject,
    nonce: input.nonce,
    iat,
    exp: iat + SERVICE_OIDC_TOKEN_SECONDS,
  })}`;
  const digest = new Uint8Array(createHash('sha256').update(utf8(signingInput)).digest());
  const sig = withServiceKey(input.vault, key, (sk) =>
    p256.sign(digest, sk, { prehash: false, lowS: true, format: 'compact' }),
  );
  return `${signingInput}.${Buffer.from(sig).toString('base64url')}`;
}
