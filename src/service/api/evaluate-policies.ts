/**
 * `POST /public/v1/query/evaluate_policies` (countersign-specific): a dry run of one activity. It
 * takes the activity's `{type, parameters}`, runs what the real submission runs before its policy
 * gate (secret sealing, the `facts` hook, which also refuses an unknown signWith or a malformed
 * transaction), and asks the gate with the caller as the only approver. It never calls `run`, and
 * writes nothing: no activity, no vote, no evaluation record.
 */
import { CountersignError, invalid, missing } from '../../shared/errors.js';
import type { ActivityDefinition } from '../activities/types.js';
import { asObject, type Params } from '../activities/params.js';
import { activityPrologue, type Submitter } from '../activities/prologue.js';
import type { KeyVault } from '../keys/index.js';
import { evaluateGate, evaluationsJson } from '../activities/policy-gate.js';
import type { OrganizationRecord, Store } from '../store/types.js';
import { uuidv7 } from '../ids.js';

/** The query's path name under `/public/v1/query/`. */
export const EVALUATE_POLICIES_QUERY = 'evaluate_policies';

/** The authenticated caller, as the handler knows it. */
export type DryRunCaller = Submitter;

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
  // The same prologue the real submission runs (the same refusal of a write into another
  // organization); the id is for the context and the sealing AAD only: nothing is recorded under it.
  const { ctx, params, vote } = activityPrologue({
    store,
    vault,
    organization: org,
    submitter: caller,
    def,
    submitted,
    activityId: uuidv7(),
    nowMs,
    voteMessage: () => '',
  });
  const factsOf = def.facts;
  const facts = factsOf === undefined ? {} : await inActivity(() => factsOf(ctx, params));
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
