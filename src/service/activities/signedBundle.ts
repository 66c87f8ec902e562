/**
 * Turnkey's signed bundle envelope (turnkey-api.md 9.5), shared by export bundles and import bundles:
 * `{version, data: hex(UTF-8 JSON), dataSignature, enclaveQuorumPublic}`, the signature being
 * ECDSA P-256 (DER) over SHA-256 of the data bytes by the service's signer key, which clients pin
 * through @turnkey/crypto's `dangerouslyOverrideSignerPublicKey`.
 */
import { CountersignError } from '../../shared/errors.js';
import { bytesToHex, utf8 } from '../../shared/encoding.js';
import { SERVICE_SIGNER_KEY_ID, signWithServiceKey } from '../keys/index.js';
import type { ActivityContext } from './types.js';

/** The bundle format version @turnkey/crypto's bundle readers accept. */
const BUNDLE_VERSION = 'v1.0.0';

/** Signs `data` (serialized as JSON, string values only) with the service signer key into a bundle. */
export async function signedBundle(
  ctx: Pick<ActivityContext, 'store' | 'vault'>,
  data: Readonly<Record<string, string>>,
): Promise<string> {
  const signer = await ctx.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  if (signer === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the service has no bundle signing key');
  const bytes = utf8(JSON.stringify(data));
  const signature = signWithServiceKey({ vault: ctx.vault, key: signer, message: bytes });
  return JSON.stringify({
    version: BUNDLE_VERSION,
    data: bytesToHex(bytes),
    dataSignature: bytesToHex(signature),
    enclaveQuorumPublic: signer.publicKey,
  });
}
