/**
 * WebAuthn on @simplewebauthn/server: the credential a registration created (attestation object →
 * authenticator data → COSE key) and the assertion in an `X-Stamp-Webauthn` header.
 *
 * Which origins and relying-party ids are accepted: the public API is Turnkey-compatible, so passkeys
 * registered by other apps (any origin, the origin's host as rpId) stamp requests too. With
 * `origins` configured (the console's `--console-origin`), only those origins are accepted. In every
 * case the rpIdHash must be the hash of the origin's host or one of its parent domains, as a browser
 * enforces it.
 */
import * as nodeCrypto from 'node:crypto';
import {
  decodeAttestationObject,
  decodeClientDataJSON,
  decodeCredentialPublicKey,
  isoCBOR,
  parseAuthenticatorData,
  cose,
} from '@simplewebauthn/server/helpers';
import { p256 } from '@noble/curves/nist.js';
import { bytesToHex } from '../shared/encoding.js';

export interface WebauthnPolicy {
  /** Accepted origins (`https://host[:port]`); empty: any origin whose host matches the rpId. */
  readonly origins: readonly string[];
}

export const OPEN_WEBAUTHN_POLICY: WebauthnPolicy = { origins: [] };

/** Why a WebAuthn value was refused; callers turn it into a field error or a stamp refusal. */
export class WebauthnError extends Error {}

export interface RegisteredCredential {
  /** base64url (no padding) of the credential id, as assertions name it. */
  readonly credentialId: string;
  /** Compressed P-256 public key, hex. */
  readonly publicKey: string;
}

/** The rpIds a browser would allow for `origin`: its host and each parent domain (not a bare TLD). */
export function rpIdsFor(origin: string): string[] {
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return [];
  }
  if (host === '' || host.startsWith('[') || /^[0-9.]+$/.test(host)) return [];
  const parts = host.split('.');
  const out = [host];
  for (let i = 1; i < parts.length - 1; i++) out.push(parts.slice(i).join('.'));
  return out;
}

function originOf(clientDataJson: Uint8Array, expectedType: string): string {
  let data: { type?: unknown; origin?: unknown };
  try {
    data = decodeClientDataJSON(Buffer.from(clientDataJson).toString('base64url'));
  } catch {
    throw new WebauthnError('clientDataJson is not base64url-encoded JSON');
  }
  if (data.type !== expectedType) throw new WebauthnError(`clientDataJson.type must be '${expectedType}'`);
  if (typeof data.origin !== 'string') throw new WebauthnError('clientDataJson.origin is missing');
  return data.origin;
}

function checkOrigin(origin: string, policy: WebauthnPolicy): void {
  if (policy.origins.length > 0 && !policy.origins.includes(origin))
    throw new WebauthnError(`origin ${origin} is not one this service accepts`);
}

/**
 * Reads the credential of a registration: `clientDataJson` must be a `webauthn.create` over
 * `challenge`, the credential id must match the authenticator data's, and the key must be ES256
 * (P-256: stamps verify P-256). The attestation statement is not checked against trust anchors
 * (the same as attestation "none"): checking a certificate chain would fetch revocation lists from
 * addresses the request names.
 */
export function readRegistration(
  input: {
    readonly challenge: string;
    readonly credentialId: Uint8Array;
    readonly clientDataJson: Uint8Array;
    readonly attestationObject: Uint8Array;
  },
  policy: WebauthnPolicy = OPEN_WEBAUTHN_POLICY,
): RegisteredCredential & { readonly fault?: 'challenge' | 'credentialId' } {
  const origin = originOf(input.clientDataJson, 'webauthn.create');
  const data = JSON.parse(Buffer.from(input.clientDataJson).toString('utf8')) as { challenge?: unknown };
  const strip = (s: string): string => s.replace(/=+$/, '');
  if (typeof data.challenge !== 'string' || strip(data.challenge) !== strip(input.challenge))
    return { credentialId: '', publicKey: '', fault: 'challenge' };
  checkOrigin(origin, policy);
  let authData: Uint8Array;
  try {
    authData = decodeAttestationObject(new Uint8Array(input.attestationObject)).get('authData');
    if (!(authData instanceof Uint8Array)) throw new Error('authData missing');
  } catch (e) {
    throw new WebauthnError(`is not a WebAuthn attestation object (${(e as Error).message})`);
  }
  let parsed: ReturnType<typeof parseAuthenticatorData>;
  try {
    parsed = parseAuthenticatorData(new Uint8Array(authData));
  } catch (e) {
    throw new WebauthnError(`authenticator data is malformed (${(e as Error).message})`);
  }
  if (!parsed.flags.at || parsed.credentialID === undefined || parsed.credentialPublicKey === undefined)
    throw new WebauthnError('authenticator data carries no attested credential (AT flag unset)');
  checkRpIdHash(parsed.rpIdHash, origin);
  if (Buffer.compare(Buffer.from(parsed.credentialID), Buffer.from(input.credentialId)) !== 0)
    return { credentialId: '', publicKey: '', fault: 'credentialId' };
  const key: unknown = decodeCredentialPublicKey(parsed.credentialPublicKey);
  // A COSE_Key is a CBOR map (RFC 9052 section 7); any other CBOR item in its place is no key at all.
  if (!(key instanceof Map))
    throw new WebauthnError('the credential public key is not a COSE_Key (a CBOR map)');
  const x = key.get(cose.COSEKEYS.x);
  const y = key.get(cose.COSEKEYS.y);
  if (
    key.get(cose.COSEKEYS.kty) !== cose.COSEKTY.EC2 ||
    key.get(cose.COSEKEYS.alg) !== cose.COSEALG.ES256 ||
    key.get(cose.COSEKEYS.crv) !== cose.COSECRV.P256
  )
    throw new WebauthnError(
      'only ES256 (P-256) credentials are supported: COSE kty must be 2, alg -7, crv 1',
    );
  if (!(x instanceof Uint8Array) || !(y instanceof Uint8Array) || x.length !== 32 || y.length !== 32)
    throw new WebauthnError('COSE key x and y must be 32-byte strings');
  let compressed: Uint8Array;
  try {
    const full = new Uint8Array(65);
    full[0] = 4;
    full.set(x, 1);
    full.set(y, 33);
    compressed = p256.Point.fromBytes(full).toBytes(true);
  } catch {
    throw new WebauthnError('COSE key is not a point on P-256');
  }
  return {
    credentialId: Buffer.from(parsed.credentialID).toString('base64url'),
    publicKey: bytesToHex(compressed),
  };
}

function checkRpIdHash(rpIdHash: Uint8Array, origin: string): void {
  const { createHash } = nodeCrypto;
  const ok = rpIdsFor(origin).some(
    (id) => Buffer.compare(createHash('sha256').update(id).digest(), Buffer.from(rpIdHash)) === 0,
  );
  if (!ok) throw new WebauthnError(`rpIdHash is not the hash of ${origin}'s host or a parent domain`);
}

/** The stored compressed P-256 key as the COSE key @simplewebauthn/server verifies with. */
function coseKey(publicKeyHex: string): Uint8Array {
  const point = p256.Point.fromHex(publicKeyHex).toBytes(false);
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [cose.COSEKEYS.kty, cose.COSEKTY.EC2],
      [cose.COSEKEYS.alg, cose.COSEALG.ES256],
      [cose.COSEKEYS.crv, cose.COSECRV.P256],
      [cose.COSEKEYS.x, point.slice(1, 33)],
      [cose.COSEKEYS.y, point.slice(33)],
    ]),
  );
}

/**
 * Checks a passkey assertion whose challenge is the hex SHA-256 of the body (as Turnkey's
 * webauthn-stamper builds it). User presence is required, user verification is not (Turnkey does
 * not require it). Resolves, or rejects with a WebauthnError.
 */
export async function verifyAssertion(
  stamp: {
    readonly credentialId: string;
    readonly authenticatorData: Uint8Array;
    readonly clientDataJson: Uint8Array;
    readonly signature: Uint8Array;
  },
  body: Uint8Array,
  publicKeyHex: string,
  policy: WebauthnPolicy = OPEN_WEBAUTHN_POLICY,
): Promise<void> {
  const origin = originOf(stamp.clientDataJson, 'webauthn.get');
  checkOrigin(origin, policy);
  const rpIds = rpIdsFor(origin);
  if (rpIds.length === 0) throw new WebauthnError(`origin ${origin} cannot be a WebAuthn relying party`);
  let publicKey: Uint8Array;
  try {
    publicKey = coseKey(publicKeyHex);
  } catch {
    throw new WebauthnError('the stored credential is not a P-256 key');
  }
  const expected = Buffer.from(nodeCrypto.createHash('sha256').update(body).digest('hex')).toString(
    'base64url',
  );
  const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');
  // The verifier's module (with its attestation-format dependencies) loads with the first assertion.
  const { verifyAuthenticationResponse } = await import('@simplewebauthn/server');
  let verified = false;
  try {
    const out = await verifyAuthenticationResponse({
      response: {
        id: stamp.credentialId,
        rawId: stamp.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          authenticatorData: b64(stamp.authenticatorData),
          clientDataJSON: b64(stamp.clientDataJson),
          signature: b64(stamp.signature),
        },
      },
      expectedChallenge: (c) => c.replace(/=+$/, '') === expected,
      expectedOrigin: origin,
      expectedRPID: rpIds,
      credential: { id: stamp.credentialId, publicKey: new Uint8Array(publicKey), counter: 0 },
      requireUserVerification: false,
    });
    verified = out.verified;
  } catch (e) {
    throw new WebauthnError((e as Error).message);
  }
  if (!verified) throw new WebauthnError('the assertion signature does not verify');
}
