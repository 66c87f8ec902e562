/**
 * Request stamps: `X-Stamp` (an API key's signature over the exact body bytes) and
 * `X-Stamp-Webauthn` (a passkey assertion whose challenge is the hex SHA-256 of the body).
 * Both are checked against the raw bytes before the body is parsed.
 */
import { createHash, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { keccak_256 } from '../../shared/keccak.js';
import { CountersignError } from '../../shared/errors.js';
import { verifyDigest, SECP256K1_N, isValidPublicKey } from '../../shared/secp256k1.js';
import { bigintToFixed, bytesToBigint, concatBytes, utf8 } from '../../shared/encoding.js';
import { ed25519Key, p256Key } from '../keys/apiPublicKeys.js';
import type { P256Verifier } from './p256Verifier.js';
// Type-only: the WebAuthn modules load with the first passkey stamp (the gRPC thread's listener
// checks API-key stamps only and never loads them).
import type { WebauthnPolicy } from '../webauthn.js';

export const STAMP_SCHEMES = [
  'SIGNATURE_SCHEME_TK_API_P256',
  'SIGNATURE_SCHEME_TK_API_SECP256K1',
  'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
  'SIGNATURE_SCHEME_TK_API_ED25519',
] as const;
export type StampScheme = (typeof STAMP_SCHEMES)[number];

/** A parsed API-key stamp. The public key is lower-case hex. */
export interface ApiKeyStamp {
  readonly kind: 'api_key';
  readonly publicKey: string;
  readonly scheme: StampScheme;
  readonly signature: string;
}

export interface WebauthnStamp {
  readonly kind: 'webauthn';
  readonly credentialId: string;
  readonly authenticatorData: Uint8Array;
  readonly clientDataJson: Uint8Array;
  readonly signature: Uint8Array;
  /** The header value, kept for the vote record. */
  readonly raw: string;
}

export type Stamp = ApiKeyStamp | WebauthnStamp;

const malformed = (reason: string) =>
  new CountersignError('STAMP_MALFORMED', `malformed activity stamp: ${reason}`);
const badSignature = (what: string) =>
  new CountersignError('STAMP_INVALID_SIGNATURE', `could not verify ${what} signature over the request body`);

const isHex = (s: string) => /^[0-9a-fA-F]*$/.test(s) && s.length % 2 === 0;

/** Reads the stamp headers (lower-case names). */
export function parseStamp(headers: Readonly<Record<string, string>>): Stamp {
  const apiKey = headers['x-stamp'];
  if (apiKey !== undefined) return parseApiKeyStamp(apiKey);
  const webauthn = headers['x-stamp-webauthn'];
  if (webauthn !== undefined) return parseWebauthnStamp(webauthn);
  throw new CountersignError('STAMP_MISSING', 'request is missing a stamp: send X-Stamp or X-Stamp-Webauthn');
}

function parseApiKeyStamp(value: string): ApiKeyStamp {
  let json: unknown;
  try {
    // base64url without padding; padded and standard base64 are accepted too
    json = JSON.parse(Buffer.from(value.trim(), 'base64url').toString('utf8'));
  } catch {
    throw malformed('X-Stamp is not base64url-encoded JSON');
  }
  if (typeof json !== 'object' || json === null) throw malformed('X-Stamp is not a JSON object');
  const o = json as Record<string, unknown>;
  const publicKey = o.publicKey ?? o.public_key;
  const { scheme, signature } = o;
  if (typeof publicKey !== 'string' || !isHex(publicKey) || publicKey.length === 0)
    throw malformed('publicKey must be a hex string');
  if (typeof scheme !== 'string' || !(STAMP_SCHEMES as readonly string[]).includes(scheme))
    throw malformed(`scheme must be one of ${STAMP_SCHEMES.join(', ')}`);
  if (typeof signature !== 'string' || !isHex(signature) || signature.length === 0)
    throw malformed('signature must be a hex string');
  return {
    kind: 'api_key',
    publicKey: publicKey.toLowerCase(),
    scheme: scheme as StampScheme,
    signature: signature.toLowerCase(),
  };
}

function parseWebauthnStamp(value: string): WebauthnStamp {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw malformed('X-Stamp-Webauthn is not JSON');
  }
  // `null`, a number or an array is JSON too (found by test/fuzz/public-api.fuzz.test.ts).
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw malformed('X-Stamp-Webauthn is not a JSON object');
  const o = json as Record<string, unknown>;
  const field = (name: string): Uint8Array => {
    const v = o[name];
    if (typeof v !== 'string' || v.length === 0)
      throw malformed(`X-Stamp-Webauthn.${name} must be a base64url string`);
    return new Uint8Array(Buffer.from(v, 'base64url'));
  };
  const credentialId = o.credentialId;
  if (typeof credentialId !== 'string' || credentialId.length === 0)
    throw malformed('X-Stamp-Webauthn.credentialId must be a base64url string');
  return {
    kind: 'webauthn',
    credentialId,
    authenticatorData: field('authenticatorData'),
    clientDataJson: field('clientDataJson'),
    signature: field('signature'),
    raw: value,
  };
}

/** Strict DER `SEQUENCE { INTEGER r, INTEGER s }` → 64-byte r‖s with low s, or undefined. */
export function derToCompactLowS(der: Uint8Array): Uint8Array | undefined {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return undefined;
  let off = 2;
  const ints: bigint[] = [];
  for (let i = 0; i < 2; i++) {
    if (der[off] !== 0x02) return undefined;
    const len = der[off + 1];
    if (len === undefined || len === 0 || len > 33 || off + 2 + len > der.length) return undefined;
    const int = der.subarray(off + 2, off + 2 + len);
    // DER integers are signed and minimal: no high bit on the first byte (that is a negative
    // number), and a leading zero only where the next byte has its high bit set.
    if ((int[0] as number) & 0x80) return undefined;
    if (int[0] === 0 && (len === 1 || ((int[1] as number) & 0x80) === 0)) return undefined;
    ints.push(bytesToBigint(int));
    off += 2 + len;
  }
  if (off !== der.length) return undefined;
  const [r, s0] = ints as [bigint, bigint];
  if (r === 0n || r >= SECP256K1_N || s0 === 0n || s0 >= SECP256K1_N) return undefined;
  const s = s0 > SECP256K1_N >> 1n ? SECP256K1_N - s0 : s0;
  return concatBytes(bigintToFixed(r, 32), bigintToFixed(s, 32));
}

/** Verifies an API-key stamp over the exact body bytes; throws STAMP_INVALID_SIGNATURE. */
export function verifyApiKeyStamp(stamp: ApiKeyStamp, body: Uint8Array): void {
  const sig = Buffer.from(stamp.signature, 'hex');
  switch (stamp.scheme) {
    case 'SIGNATURE_SCHEME_TK_API_P256': {
      const key = p256VerifyKey(stamp);
      let ok = false;
      try {
        ok = nodeVerify('sha256', body, key, sig);
      } catch {
        ok = false;
      }
      if (!ok) throw badSignature('api key');
      return;
    }
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1':
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191': {
      const pub = Buffer.from(stamp.publicKey, 'hex');
      if (pub.length !== 33 || !isValidPublicKey(pub))
        throw malformed('publicKey is not a compressed secp256k1 point');
      const compact = derToCompactLowS(sig);
      if (compact === undefined) throw badSignature('api key');
      const digest =
        stamp.scheme === 'SIGNATURE_SCHEME_TK_API_SECP256K1'
          ? createHash('sha256').update(body).digest()
          : keccak_256(concatBytes(utf8(`\x19Ethereum Signed Message:\n${body.length}`), body));
      if (!verifyDigest(digest, compact, pub)) throw badSignature('api key');
      return;
    }
    case 'SIGNATURE_SCHEME_TK_API_ED25519': {
      const key = ed25519Key(stamp.publicKey);
      if (key === undefined) throw malformed('publicKey is not a 32-byte ed25519 key');
      let ok = false;
      try {
        ok = nodeVerify(null, body, key, sig);
      } catch {
        ok = false;
      }
      if (!ok) throw badSignature('api key');
      return;
    }
  }
}

/**
 * verifyApiKeyStamp with the P-256 check (the scheme Turnkey's clients and the daemon stamp with)
 * run off this thread, so a busy request thread hands the ~80 µs of the verification to a core that
 * has time: on `batched`'s thread when given (see ./p256Verifier.ts), else on libuv's pool. The
 * other schemes are checked here as verifyApiKeyStamp does.
 */
export async function verifyApiKeyStampOffThread(
  stamp: ApiKeyStamp,
  body: Uint8Array,
  batched?: P256Verifier,
): Promise<void> {
  if (stamp.scheme !== 'SIGNATURE_SCHEME_TK_API_P256') return verifyApiKeyStamp(stamp, body);
  const key = p256VerifyKey(stamp);
  if (batched !== undefined) {
    if (!(await batched.verify(stamp.publicKey, body, stamp.signature))) throw badSignature('api key');
    return;
  }
  const sig = Buffer.from(stamp.signature, 'hex');
  const ok = await new Promise<boolean>((resolve) => {
    try {
      nodeVerify('sha256', body, key, sig, (err, valid) => resolve(err === null && valid));
    } catch {
      resolve(false);
    }
  });
  if (!ok) throw badSignature('api key');
}

/** The P-256 stamp's key as node:crypto verifies with it; throws STAMP_MALFORMED for a bad point. */
function p256VerifyKey(stamp: ApiKeyStamp): { key: KeyObject; dsaEncoding: 'der' } {
  const key = p256Key(stamp.publicKey);
  if (key === undefined) throw malformed('publicKey is not a compressed P-256 point');
  // WebCrypto signers do not normalize s, so high-S DER is accepted (no low-S check here).
  return { key, dsaEncoding: 'der' };
}

/**
 * Verifies a passkey assertion over the body against the authenticator's compressed P-256 key
 * (@simplewebauthn/server, see ../webauthn.ts); throws STAMP_MALFORMED or STAMP_INVALID_SIGNATURE.
 */
export async function verifyWebauthnStamp(
  stamp: WebauthnStamp,
  body: Uint8Array,
  publicKeyHex: string,
  policy?: WebauthnPolicy,
): Promise<void> {
  const { OPEN_WEBAUTHN_POLICY, verifyAssertion, WebauthnError } = await import('../webauthn.js');
  try {
    await verifyAssertion(stamp, body, publicKeyHex, policy ?? OPEN_WEBAUTHN_POLICY);
  } catch (e) {
    if (!(e instanceof WebauthnError)) throw e;
    if (/clientDataJson/.test(e.message)) throw malformed(e.message);
    throw new CountersignError(
      'STAMP_INVALID_SIGNATURE',
      `could not verify WebAuthN signature over the request body: ${e.message}`,
    );
  }
}
