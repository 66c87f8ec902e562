/**
 * The JWTs the service issues and checks with its own P-256 key (serviceKey.ts), in the two shapes
 * Turnkey's clients verify (turnkey-api.md 9.1, 9.2):
 * - session JWTs: ES256 header, but signed over SHA-256(SHA-256(header.payload)) — Turnkey's
 *   non-standard double hash, which @turnkey/crypto's `verifySessionJwtSignature` expects;
 * - verification tokens: standard ES256 (RFC 7515/7518: one SHA-256, raw r‖s), with millisecond
 *   `exp` as a decimal string.
 * Also the client signature that binds a verification token to the request using it (9.2).
 */
import { createHash } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { hexToBytes, utf8 } from '../../shared/encoding.js';
import { invalid } from '../../shared/errors.js';
import type { KeyVault } from './KeyVault.js';
import { withServiceKey, type SealedServiceKey } from './serviceKey.js';

/** The header both token kinds carry (RFC 7519 section 5). */
const JWT_HEADER = { alg: 'ES256', typ: 'JWT' } as const;

/** The claims of a session JWT; `@turnkey/core` requires the first five. */
export interface SessionClaims {
  /** Unix seconds (a JSON number). */
  readonly exp: number;
  /** Compressed P-256 public key of the session, hex. */
  readonly public_key: string;
  readonly session_type: 'SESSION_TYPE_READ_WRITE' | 'SESSION_TYPE_READ_ONLY';
  readonly user_id: string;
  readonly organization_id: string;
}

/** The claims of a verification token; all strings, `exp` in milliseconds. */
export interface VerificationTokenClaims {
  readonly id: string;
  readonly verification_type: string;
  readonly contact: string;
  readonly organization_id: string;
  /** Compressed P-256 public key the client signs usages with, hex. */
  readonly public_key: string;
  readonly exp: string;
}

const sha256 = (data: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());
const b64url = (data: Uint8Array | string): string =>
  Buffer.from(typeof data === 'string' ? utf8(data) : data).toString('base64url');

/**
 * Opens the sealed service key, checks it still derives its recorded public key (a wrong master
 * key or swapped row fails here), signs the 32-byte digest (no further hashing, low-S, r‖s) and
 * zeroes the scalar.
 */
function signDigest(vault: KeyVault, key: SealedServiceKey, digest: Uint8Array): Uint8Array {
  return withServiceKey(vault, key, (secret) =>
    p256.sign(digest, secret, { prehash: false, lowS: true, format: 'compact' }),
  );
}

/** A session JWT for `claims`, signed by the service key over SHA-256(SHA-256(header.payload)). */
export function signSessionJwt(input: {
  readonly vault: KeyVault;
  readonly key: SealedServiceKey;
  readonly claims: SessionClaims;
}): string {
  const c = input.claims;
  const payload = {
    exp: c.exp,
    public_key: c.public_key,
    session_type: c.session_type,
    user_id: c.user_id,
    organization_id: c.organization_id,
  };
  const signingInput = `${b64url(JSON.stringify(JWT_HEADER))}.${b64url(JSON.stringify(payload))}`;
  const signature = signDigest(input.vault, input.key, sha256(sha256(utf8(signingInput))));
  return `${signingInput}.${b64url(signature)}`;
}

/** A standard ES256 verification token for `claims`, signed by the service key. */
export function signVerificationToken(input: {
  readonly vault: KeyVault;
  readonly key: SealedServiceKey;
  readonly claims: VerificationTokenClaims;
}): string {
  const c = input.claims;
  const payload = {
    id: c.id,
    verification_type: c.verification_type,
    contact: c.contact,
    organization_id: c.organization_id,
    public_key: c.public_key,
    exp: c.exp,
  };
  const signingInput = `${b64url(JSON.stringify(JWT_HEADER))}.${b64url(JSON.stringify(payload))}`;
  const signature = signDigest(input.vault, input.key, sha256(utf8(signingInput)));
  return `${signingInput}.${b64url(signature)}`;
}

interface SplitJwt {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
  readonly signingInput: string;
  readonly signature: Uint8Array;
}

const B64URL_RE = /^[A-Za-z0-9_-]+$/;

function splitJwt(token: string, field: string): SplitJwt {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => B64URL_RE.test(p)))
    throw invalid(field, 'is not a JWT (three base64url parts separated by dots)');
  const [h, p, s] = parts as [string, string, string];
  const json = (part: string, what: string): Record<string, unknown> => {
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    } catch {
      throw invalid(field, `the JWT ${what} is not JSON`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw invalid(field, `the JWT ${what} is not a JSON object`);
    return v as Record<string, unknown>;
  };
  return {
    header: json(h, 'header'),
    payload: json(p, 'payload'),
    signingInput: `${h}.${p}`,
    signature: new Uint8Array(Buffer.from(s, 'base64url')),
  };
}

/** ECDSA P-256 check of a raw r‖s signature over a 32-byte digest; high-S is accepted (RFC 7518). */
function verifyDigest(signature: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return p256.verify(signature, digest, publicKey, { prehash: false, lowS: false, format: 'compact' });
  } catch {
    return false;
  }
}

/**
 * The one verifier of verification tokens (issue 13 merged the two that existed): ES256 header,
 * signature by `signerPublicKey` (the service key, SEC1 hex), the six claims present as strings
 * (`public_key` may be empty: a token issued without a client key), `exp` in milliseconds and not
 * reached at `nowMs`. Every failure is a FIELD_INVALID naming `field`. Returns the claims.
 */
export function verifyVerificationToken(input: {
  readonly token: string;
  readonly signerPublicKey: string;
  readonly nowMs: number;
  readonly field: string;
}): VerificationTokenClaims {
  const { field } = input;
  const bad = (reason: string) => invalid(field, `invalid verification token: ${reason}`);
  const jwt = splitJwt(input.token, field);
  if (jwt.header.alg !== 'ES256' || jwt.header.typ !== 'JWT')
    throw bad("the token's header must be {alg: ES256, typ: JWT}");
  const pub = hexToBytes(input.signerPublicKey, 'signerPublicKey');
  if (!verifyDigest(jwt.signature, sha256(utf8(jwt.signingInput)), pub))
    throw bad('the token is not signed by this service');
  const claims: Record<string, string> = {};
  for (const name of [
    'id',
    'verification_type',
    'contact',
    'organization_id',
    'public_key',
    'exp',
  ] as const) {
    const v = jwt.payload[name];
    if (typeof v !== 'string' || (v.length === 0 && name !== 'public_key'))
      throw bad(`the token has no '${name}' claim`);
    claims[name] = v;
  }
  const exp = claims.exp as string;
  if (!/^[0-9]{1,16}$/.test(exp)) throw bad("the token's 'exp' claim is not milliseconds");
  if (Number(exp) <= input.nowMs) throw bad('the token has expired');
  return claims as unknown as VerificationTokenClaims;
}

/** Verifies a session JWT's double-hash signature by `signerPublicKey` and returns its claims. */
export function verifySessionJwt(input: {
  readonly token: string;
  readonly signerPublicKey: string;
  readonly field: string;
}): Record<string, unknown> {
  const jwt = splitJwt(input.token, input.field);
  const digest = sha256(sha256(utf8(jwt.signingInput)));
  if (!verifyDigest(jwt.signature, digest, hexToBytes(input.signerPublicKey, 'signerPublicKey')))
    throw invalid(input.field, 'the session is not signed by this service');
  return jwt.payload;
}

/**
 * The client signature of 9.2: raw r‖s hex (128 digits) of ECDSA P-256 over SHA-256(utf8(message))
 * by the compressed key `publicKey`. False on any malformed input.
 */
export function verifyClientSignature(input: {
  readonly publicKey: string;
  readonly message: string;
  readonly signature: string;
}): boolean {
  if (!/^[0-9a-fA-F]{128}$/.test(input.signature) || !/^0[23][0-9a-fA-F]{64}$/.test(input.publicKey))
    return false;
  return verifyDigest(
    hexToBytes(input.signature, 'signature'),
    sha256(utf8(input.message)),
    hexToBytes(input.publicKey, 'publicKey'),
  );
}
