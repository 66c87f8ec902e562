/**
 * `POST /public/v1/query/evaluate_policies` (countersign-specific): a dry run of one activity. It
 * takes the activity's `{type, parameters}`, runs what the real submission runs before its policy
 * gate (secret sealing, the `facts` hook, which also refuses an unknown signWith or a malformed
 * transaction), and asks the gate with the caller as the only approver. It never calls `run`, and
 * writes nothing: no activity, no vote, no evaluation record.
 */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid, missing } from '../../shared/errors.js';
import type { ActivityDefinition } from '../activities/types.js';
import { asObject, type Params } from '../activities/params.js';
import { sealSecretParams } from '../activities/sealSecretParams.js';
import type { KeyVault } from '../keys/index.js';
import { evaluateGate, evaluationsJson } from '../activities/policy-gate.js';
import type { OrganizationRecord, Store, UserRecord, VoteRecord } from '../store/types.js';
import { uuidv7 } from '../ids.js';

/** The query's path name under `/public/v1/query/`. */
export const EVALUATE_POLICIES_QUERY = 'evaluate_policies';

/** The authenticated caller, as the handler knows it. */
export interface DryRunCaller {
  readonly user: UserRecord;
  /** The organization the stamping credential belongs to (a parent's reads a sub-organization). */
  readonly credentialOrgId: string;
  readonly publicKey: string;
  readonly signature: string;
  readonly scheme: string;
}

export interface EvaluatePoliciesQueryInput {
  readonly store: Store;
  readonly vault: KeyVault;
  /** The organization the body names, already resolved. */
  readonly organization: OrganizationRecord;
  readonly caller: DryRunCaller;
  /** Activities by type, as the handler dispatches them. */
  readonly definitions: ReadonlyMap<string, ActivityDefinition>;
  readonly nowMs: number;
  /** The body: `{organizationId, activity: {type, parameters}}`. */
  readonly body: Params;
}

/** Answers what the policy engine would decide for the activity, without running or recording it. */
export async function evaluatePoliciesQuery(
  input: EvaluatePoliciesQueryInput,
): Promise<Record<string, unknown>> {
  const { store, vault, organization: org, caller, nowMs, body } = input;
  if (body.activity === undefined || body.activity === null) throw missing('activity');
  const activity = asObject(body.activity, 'activity');
  const type = activity.type;
  if (type === undefined || type === null) throw missing('activity.type');
  if (typeof type !== 'string') throw invalid('activity.type', 'must be a string');
  // approve_activity / reject_activity are votes on an activity, not requests the gate decides.
  const def = input.definitions.get(type);
  if (def === undefined)
    throw new CountersignError(
      'ACTIVITY_TYPE_UNSUPPORTED',
      `activity.type: ${type} is not an activity policies are evaluated for`,
      { field: 'activity.type' },
    );
  if (activity.parameters === undefined || activity.parameters === null) throw missing('activity.parameters');
  const submitted = asObject(activity.parameters, 'activity.parameters');
  // The same refusal the real submission would meet: the answer would be about a write it cannot make.
  if (caller.credentialOrgId !== org.id)
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      'request not authorized: a parent organization can read a sub-organization but not write to it',
      { field: 'organizationId' },
    );

  // An id for the context and the sealing AAD only; nothing is ever recorded under it.
  const activityId = uuidv7();
  const ctx = { store, vault, organization: org, user: caller.user, activityId, nowMs };
  const params =
    def.secretParams === undefined
      ? submitted
      : sealSecretParams(vault, activityId, submitted, def.secretParams);
  const factsOf = def.facts;
  const facts = factsOf === undefined ? {} : await inActivity(() => factsOf(ctx, params));
  // The submitter's implicit approval, as execute() casts it; it exists only for this evaluation.
  const vote: VoteRecord = {
    id: randomUUID(),
    activityId,
    userId: caller.user.id,
    selection: 'VOTE_SELECTION_APPROVED',
    message: '',
    publicKey: caller.publicKey,
    signature: caller.signature,
    scheme: caller.scheme,
    createdAtMs: nowMs,
  };
  const decision = await evaluateGate({
    store,
    organization: org,
    type: def.type,
    params,
    facts,
    votes: [vote],
    nowMs,
  });
  return {
    outcome: decision.outcome,
    rootQuorumReached: decision.rootQuorumReached,
    policyEvaluations: evaluationsJson(decision),
  };
}

/**
 * Runs an activity's own validation, re-homing the field it names (`parameters.signWith`) onto this
 * body's (`activity.parameters.signWith`); code, status and reason stay those of the real refusal.
 */
async function inActivity<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (!(e instanceof CountersignError) || e.field === undefined) throw e;
    const field = `activity.${e.field}`;
    const message = e.message.startsWith(`${e.field}:`) ? `activity.${e.message}` : `${field}: ${e.message}`;
    throw new CountersignError(e.code, message, { field, cause: e, meta: e.meta });
  }
}
