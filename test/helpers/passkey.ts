/** What a software authenticator registering a passkey sends: the attestation object (fmt none). */
import { createHash } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A `none` attestation object: authenticator data over `rpId` (`flags`, a zero counter and AAGUID)
 * attesting `credentialId` with `coseKey` (CBOR bytes, normally a COSE_Key map).
 */
export function noneAttestationObject(
  rpId: string,
  credentialId: Uint8Array,
  coseKey: Uint8Array,
  flags = 0x45,
): Uint8Array {
  const authData = Buffer.concat([
    createHash('sha256').update(rpId).digest(),
    Uint8Array.of(flags, 0, 0, 0, 0),
    new Uint8Array(16),
    Uint8Array.of(credentialId.length >> 8, credentialId.length & 0xff),
    credentialId,
    coseKey,
  ]);
  return isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', new Uint8Array(authData)],
    ]) as never,
  );
}
