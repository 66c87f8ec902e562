/** Verification tokens signed by the embedded service's own key, as its OTP flow issues them. */
import { randomUUID } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import {
  KeyVault,
  loadOrCreateMasterKey,
  SERVICE_SIGNER_KEY_ID,
  signWithServiceKey,
} from '../../src/service/keys/index.js';
import type { EmbeddedHarness } from './embedded.js';

export interface VerificationClaimsInput {
  readonly contact: string;
  readonly organizationId: string;
  readonly type?: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS';
  readonly publicKey?: string;
  readonly expiresAtMs?: number;
}

/** A compact ES256 token over the claims, signed with the service signer key of `h`'s data dir. */
export async function serviceVerificationToken(
  h: EmbeddedHarness,
  c: VerificationClaimsInput,
): Promise<string> {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const claims = {
    id: randomUUID(),
    verification_type: c.type ?? 'OTP_TYPE_EMAIL',
    contact: c.contact,
    organization_id: c.organizationId,
    public_key: c.publicKey ?? '',
    exp: String(c.expiresAtMs ?? Date.now() + 600_000),
  };
  const input = `${enc({ alg: 'ES256', typ: 'JWT' })}.${enc(claims)}`;
  const master = loadOrCreateMasterKey({ dataDir: h.dataDir });
  const vault = new KeyVault(master);
  master.fill(0);
  const key = await h.service.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  if (key === undefined) throw new Error('no service signer key');
  const der = signWithServiceKey({ vault, key, message: Buffer.from(input) });
  const compact = p256.Signature.fromBytes(der, 'der').toBytes('compact');
  return `${input}.${Buffer.from(compact).toString('base64url')}`;
}
