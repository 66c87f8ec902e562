/** Verification tokens signed by the embedded service's own key, as its OTP flow issues them. */
import { randomUUID } from 'node:crypto';
import { KeyVault, loadOrCreateMasterKey, SERVICE_SIGNER_KEY_ID } from '../../src/service/keys/index.js';
import { signVerificationToken } from '../../src/service/keys/jwt.js';
import type { EmbeddedHarness } from './embedded.js';

export interface VerificationClaimsInput {
  readonly contact: string;
  readonly organizationId: string;
  readonly type?: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS';
  /** Compressed P-256 hex of the key the client signs usages with ('' when none). */
  readonly publicKey?: string;
  readonly expiresAtMs?: number;
}

/** A token over the claims, signed with the service signer key of `h`'s data dir. */
export async function serviceVerificationToken(
  h: EmbeddedHarness,
  c: VerificationClaimsInput,
): Promise<string> {
  const master = loadOrCreateMasterKey({ dataDir: h.dataDir });
  const vault = new KeyVault(master);
  master.fill(0);
  const key = await h.service.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  if (key === undefined) throw new Error('no service signer key');
  return signVerificationToken({
    vault,
    key,
    claims: {
      id: randomUUID(),
      verification_type: c.type ?? 'OTP_TYPE_EMAIL',
      contact: c.contact,
      organization_id: c.organizationId,
      public_key: c.publicKey ?? '',
      exp: String(c.expiresAtMs ?? Date.now() + 600_000),
    },
  });
}
