/**
 * Console invites (issue 17). `countersign console invite` gives a user a P-256 API key that expires
 * in 15 minutes and whose name marks it as an invite; the link carries its private key in the URL
 * fragment (never sent to a server). Opening the link registers a passkey: the console posts the
 * attestation to {@link CONSOLE_REDEEM_PATH} stamped with the invite key, and one transaction deletes
 * the key and adds the authenticator, so a link works once. The operator who can run the CLI on the
 * data dir authorized the registration by issuing the invite, as with `init`'s root key.
 */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../../shared/errors.js';
import { asObject, reqString, type Params } from '../activities/params.js';
import { parseAttestation } from '../activities/users.js';
import type { AuthenticatorRecord, Store, UserRecord } from '../store/types.js';
import type { WebauthnPolicy } from '../webauthn.js';

/** Unstamped by a passkey: stamped by the invite's API key. */
export const CONSOLE_REDEEM_PATH = '/console/v1/redeem_invite';
/** The name prefix that makes an API key an invite. */
export const INVITE_KEY_PREFIX = 'console-invite ';
export const INVITE_LIFETIME_SECONDS = 15 * 60;

export interface RedeemInput {
  readonly store: Store;
  readonly organizationId: string;
  readonly user: UserRecord;
  /** The stamp's API key (already verified over the body, and unexpired). */
  readonly publicKey: string;
  readonly body: Params;
  readonly policy: WebauthnPolicy | undefined;
  readonly nowMs: number;
}

const used = () =>
  new CountersignError(
    'STAMP_UNKNOWN_KEY',
    'this invite link was already used or has expired: ask for a new one (countersign console invite)',
  );

/** Registers the invite's passkey and deletes the invite key in one transaction. */
export async function redeemInvite(input: RedeemInput): Promise<Record<string, unknown>> {
  const keys = await input.store.findApiKeys(input.publicKey, [input.organizationId]);
  const key = keys.find((k) => k.userId === input.user.id);
  if (key === undefined) throw used();
  if (!key.name.startsWith(INVITE_KEY_PREFIX))
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      'request not authorized: only an invite key (countersign console invite) registers a passkey here',
    );
  const params = asObject(input.body.parameters, 'parameters');
  const name = reqString(params, 'authenticatorName', 'parameters');
  if (name.length > 256) throw invalid('parameters.authenticatorName', 'must be at most 256 characters');
  const cred = parseAttestation(params, 'parameters', input.policy);
  const record: AuthenticatorRecord = {
    id: randomUUID(),
    userId: input.user.id,
    organizationId: input.organizationId,
    name,
    credentialId: cred.credentialId,
    publicKey: cred.publicKey,
    createdAtMs: input.nowMs,
  };
  await input.store.write(async (tx) => {
    if (!(await tx.deleteApiKey(input.user.id, key.id))) throw used();
    if (await tx.authenticatorCredentialTaken(input.organizationId, cred.credentialId))
      throw invalid(
        'parameters.attestation.credentialId',
        'an authenticator with this credential id already exists in the organization',
      );
    await tx.insertAuthenticator(record);
  });
  return {
    organizationId: input.organizationId,
    userId: input.user.id,
    userName: input.user.name,
    authenticatorId: record.id,
    credentialId: record.credentialId,
  };
}
