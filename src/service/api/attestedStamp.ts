/**
 * `X-Stamp-Attested` (turnkey-api.md 1.4): how `@turnkey/core` ≥ 2.7 logs in after an email/SMS
 * OTP. The header is base64url JSON `{publicKeyAttestation, scheme, publicKey, signature}`: a P-256
 * DER signature over SHA-256(body) by `publicKey`, and a verification token of this service whose
 * `public_key` claim is that key. The token names a contact; the caller is that contact's user, in
 * the token's organization or one of its sub-organizations.
 *
 * Accepted for `stamp_login` only (the token proves a contact, which is enough to open a session
 * and nothing else), and only with STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN; the OIDC scheme is
 * refused with a clear error. The token is not consumed: `@turnkey/core` signs up with the token and
 * then logs in with it, and a second login with the same key is refused anyway (stamp_login will
 * not register a key twice).
 */
import { CountersignError } from '../../shared/errors.js';
import { SERVICE_SIGNER_KEY_ID } from '../keys/index.js';
import { verifyVerificationToken } from '../keys/jwt.js';
import type { OrganizationRecord, Store, UserRecord } from '../store/types.js';
import { verifyApiKeyStamp } from './stamp.js';

export const ATTESTED_SCHEMES = [
  'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN',
  'STAMP_ATTESTED_SCHEME_P256_OIDC',
] as const;

export interface AttestedStamp {
  readonly kind: 'attested';
  readonly publicKey: string;
  readonly scheme: (typeof ATTESTED_SCHEMES)[number];
  readonly attestation: string;
  readonly signature: string;
}

const malformed = (reason: string) =>
  new CountersignError('STAMP_MALFORMED', `malformed activity stamp: X-Stamp-Attested ${reason}`);

/** Parses the header value; STAMP_MALFORMED naming the part that is wrong. */
export function parseAttestedStamp(value: string): AttestedStamp {
  let o: Record<string, unknown>;
  try {
    const v: unknown = JSON.parse(Buffer.from(value.trim(), 'base64url').toString('utf8'));
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    o = v as Record<string, unknown>;
  } catch {
    throw malformed('is not base64url-encoded JSON');
  }
  const { publicKey, scheme, publicKeyAttestation, signature } = o;
  if (typeof publicKey !== 'string' || !/^0[23][0-9a-fA-F]{64}$/.test(publicKey))
    throw malformed('publicKey must be a compressed P-256 public key (hex)');
  if (typeof scheme !== 'string' || !(ATTESTED_SCHEMES as readonly string[]).includes(scheme))
    throw malformed(`scheme must be one of ${ATTESTED_SCHEMES.join(', ')}`);
  if (typeof publicKeyAttestation !== 'string' || publicKeyAttestation === '')
    throw malformed('publicKeyAttestation must be the token');
  if (typeof signature !== 'string' || !/^[0-9a-fA-F]+$/.test(signature))
    throw malformed('signature must be DER hex');
  return {
    kind: 'attested',
    publicKey: publicKey.toLowerCase(),
    scheme: scheme as AttestedStamp['scheme'],
    attestation: publicKeyAttestation,
    signature: signature.toLowerCase(),
  };
}

const unauthenticated = (reason: string) =>
  new CountersignError('STAMP_INVALID_SIGNATURE', `could not verify X-Stamp-Attested: ${reason}`);

/**
 * The user an attested stamp speaks for and the organization the request runs in (the user's,
 * which may be a sub-organization of the one the body names). Verifies the signature over `body`,
 * the token (signature by our signer key, expiry, `public_key` = the stamp's key) and that the body's
 * organization is the token's or one of its sub-organizations.
 */
export async function attestedCaller(input: {
  readonly store: Store;
  readonly stamp: AttestedStamp;
  readonly body: Uint8Array;
  readonly organization: OrganizationRecord;
  readonly nowMs: number;
}): Promise<{ user: UserRecord; organization: OrganizationRecord }> {
  const { store, stamp, organization } = input;
  if (stamp.scheme !== 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN')
    throw new CountersignError(
      'STAMP_MALFORMED',
      `X-Stamp-Attested: scheme ${stamp.scheme} is not supported by this version; log in with oauth_login`,
    );
  verifyApiKeyStamp(
    {
      kind: 'api_key',
      publicKey: stamp.publicKey,
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      signature: stamp.signature,
    },
    input.body,
  );
  const signer = await store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  if (signer === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the service has no verification-token key');
  let claims;
  try {
    claims = verifyVerificationToken({
      token: stamp.attestation,
      signerPublicKey: signer.publicKey,
      nowMs: input.nowMs,
      field: 'X-Stamp-Attested.publicKeyAttestation',
    });
  } catch (e) {
    throw unauthenticated(e instanceof Error ? e.message : 'the verification token is invalid');
  }
  if (claims.public_key.toLowerCase() !== stamp.publicKey)
    throw unauthenticated("the verification token's public_key is not the stamp's publicKey");
  const tokenOrg = claims.organization_id;
  if (organization.id !== tokenOrg && organization.parentId !== tokenOrg)
    throw unauthenticated('the verification token was issued for another organization');
  const kind = claims.verification_type === 'OTP_TYPE_SMS' ? 'PHONE_NUMBER' : 'EMAIL';
  const contact = claims.contact.toLowerCase();
  const matches = (u: UserRecord) =>
    kind === 'EMAIL' ? u.email?.toLowerCase() === contact : u.phoneNumber === claims.contact;
  // The named organization first (a sub-organization named by the client), then the token's
  // organization and its sub-organizations holding the contact.
  const candidates = [
    organization.id,
    ...(await store.listSubOrganizationIds(tokenOrg, { type: kind, value: claims.contact }, { limit: 100 })),
  ];
  for (const orgId of candidates) {
    if (orgId !== organization.id && organization.id !== tokenOrg) continue;
    const user = (await store.listUsers(orgId)).find(matches);
    if (user === undefined) continue;
    const org = orgId === organization.id ? organization : await store.getOrganization(orgId);
    if (org !== undefined) return { user, organization: org };
  }
  throw new CountersignError(
    'STAMP_UNKNOWN_KEY',
    "X-Stamp-Attested: no user of this organization or its sub-organizations has the verification token's contact; sign up first",
  );
}
