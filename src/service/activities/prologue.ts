/**
 * What a submission and its dry run (`evaluate_policies`) both do before the policy gate: refuse a
 * write into an organization the credential does not belong to, make the activity's context, seal
 * the secret parameters under the activity id, and cast the submitter's implicit approval. One
 * function, so the dry run cannot drift from the real thing.
 */
import { CountersignError } from '../../shared/errors.js';
import { uuidv7 } from '../ids.js';
import type { KeyVault } from '../keys/index.js';
import type { OrganizationRecord, Store, UserRecord, VoteRecord } from '../store/types.js';
import type { Params } from './params.js';
import { sealSecretParams } from './sealSecretParams.js';
import type { ActivityContext, ActivityDefinition } from './types.js';

/** The authenticated submitter, as the handler knows it. */
export interface Submitter {
  readonly user: UserRecord;
  /** The organization the stamping credential belongs to (a parent's reads a sub-organization). */
  readonly credentialOrgId: string;
  readonly publicKey: string;
  readonly signature: string;
  readonly scheme: string;
}

export interface PrologueInput {
  readonly store: Store;
  readonly vault: KeyVault;
  readonly organization: OrganizationRecord;
  readonly submitter: Submitter;
  readonly def: Pick<ActivityDefinition, 'secretParams'>;
  readonly submitted: Params;
  readonly activityId: string;
  readonly nowMs: number;
  /** The vote's message, given the parameters as they will be recorded (secrets sealed). */
  readonly voteMessage: (params: Params) => string;
}

export interface Prologue {
  readonly ctx: ActivityContext;
  /** The parameters with their secrets sealed. */
  readonly params: Params;
  /** The submitter's implicit approval. */
  readonly vote: VoteRecord;
}

/** REQUEST_NOT_AUTHORIZED unless the submitter's credential belongs to the organization it writes. */
export function assertWritable(submitter: Submitter, organization: OrganizationRecord): void {
  if (submitter.credentialOrgId !== organization.id)
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      'request not authorized: a parent organization can read a sub-organization but not write to it',
      { field: 'organizationId' },
    );
}

export function activityPrologue(i: PrologueInput): Prologue {
  assertWritable(i.submitter, i.organization);
  const { store, vault, organization, submitter, activityId, nowMs } = i;
  const ctx: ActivityContext = { store, vault, organization, user: submitter.user, activityId, nowMs };
  const params =
    i.def.secretParams === undefined
      ? i.submitted
      : sealSecretParams(vault, activityId, i.submitted, i.def.secretParams);
  // Time-ordered like the activity's id: the votes table's primary key then grows at its end, one
  // page a batch, where a random id dirtied a leaf of its own per vote.
  const vote: VoteRecord = {
    id: uuidv7(nowMs),
    activityId,
    userId: submitter.user.id,
    selection: 'VOTE_SELECTION_APPROVED',
    message: i.voteMessage(params),
    publicKey: submitter.publicKey,
    signature: submitter.signature,
    scheme: submitter.scheme,
    createdAtMs: nowMs,
  };
  return { ctx, params, vote };
}
