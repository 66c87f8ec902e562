/**
 * approve_activity / reject_activity (turnkey-api.md 3.4): a vote on an activity that waits for
 * consensus. An approval re-runs the policy gate with the approvals that still count; once it
 * allows, the original activity runs now, from its stored intent, and completes. A reject ends it.
 */
import { appProofsJson } from '../appProofs.js';
import { uuidv7 } from '../ids.js';
import { CountersignError, isCountersignError, toRpcStatus } from '../../shared/errors.js';
import type { KeyVault } from '../keys/index.js';
import { evaluateGate, evaluationRecord } from './policy-gate.js';
import type { ActivityRecord, OrganizationRecord, Store, UserRecord, VoteRecord } from '../store/types.js';
import { reqString, type Params } from './params.js';
import type { ActivityDefinition } from './types.js';
import type { PolicyDecision } from '../policy/index.js';
import { webhookContextOf } from '../webhooks/context.js'; // --- webhooks ---

export interface DecisionDefinition {
  readonly type: string;
  readonly path: string;
  readonly intentKey: string;
  readonly selection: VoteRecord['selection'];
}

export const DECISION_ACTIVITIES: readonly DecisionDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
    path: 'approve_activity',
    intentKey: 'approveActivityIntent',
    selection: 'VOTE_SELECTION_APPROVED',
  },
  {
    type: 'ACTIVITY_TYPE_REJECT_ACTIVITY',
    path: 'reject_activity',
    intentKey: 'rejectActivityIntent',
    selection: 'VOTE_SELECTION_REJECTED',
  },
];

export interface Voter {
  readonly user: UserRecord;
  readonly publicKey: string;
  readonly signature: string;
  readonly scheme: string;
  /** The raw stamped request body. */
  readonly message: string;
}

export interface DeciderDeps {
  readonly store: Store;
  readonly vault: KeyVault;
  readonly definitions: ReadonlyMap<string, ActivityDefinition>;
  /** The name this process's leases carry. */
  readonly replicaId: string;
  /** How long a decision's lease holds before another replica may take it (its holder died). */
  readonly leaseMs: number;
}

export interface DecisionInput {
  readonly decision: DecisionDefinition;
  readonly params: Params;
  /** The organization the vote was stamped for (the voter's). */
  readonly organization: OrganizationRecord;
  readonly voter: Voter;
  readonly nowMs: number;
}

const PENDING = 'ACTIVITY_STATUS_CONSENSUS_NEEDED';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Builds the vote handler. Votes on one activity are taken one at a time across replicas: the
 * voter's replica holds a lease on the activity row while it counts the votes, runs the activity and
 * records the outcome (the completing write locks the row and checks the lease), so an activity
 * completes once and each vote counts once (votes are also unique per voter in the database).
 */
export function createDecider(deps: DeciderDeps): (input: DecisionInput) => Promise<ActivityRecord> {
  const { store } = deps;
  const locks = new Map<string, Promise<unknown>>();

  async function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = locks.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    locks.set(key, settled);
    try {
      return await next;
    } finally {
      if (locks.get(key) === settled) locks.delete(key);
    }
  }

  async function reread(a: ActivityRecord): Promise<ActivityRecord> {
    return (await store.getActivity(a.organizationId, a.id)) ?? a;
  }

  async function vote(input: DecisionInput, target: ActivityRecord): Promise<ActivityRecord> {
    const { voter, nowMs } = input;
    const votes = await store.listVotes(target.id);
    // A voter's second vote on an undecided activity changes nothing: each voter counts once.
    if (target.status === PENDING && votes.some((v) => v.userId === voter.user.id)) return target;
    if (target.status !== PENDING) {
      // The same voter sending again after the decision gets the decided activity back.
      if (votes.some((v) => v.userId === voter.user.id)) return target;
      throw new CountersignError(
        'FIELD_INVALID',
        `parameters.fingerprint: activity ${target.id} is ${target.status}; only an activity in ${PENDING} takes votes`,
        { field: 'parameters.fingerprint' },
      );
    }
    const v: VoteRecord = {
      id: uuidv7(nowMs),
      activityId: target.id,
      userId: voter.user.id,
      selection: input.decision.selection,
      message: voter.message,
      publicKey: voter.publicKey,
      signature: voter.signature,
      scheme: voter.scheme,
      createdAtMs: nowMs,
    };
    if (v.selection === 'VOTE_SELECTION_REJECTED') {
      await store.write(async (tx) => {
        await tx.insertVote(v);
        if (
          await tx.updateActivity(target.id, PENDING, {
            status: 'ACTIVITY_STATUS_REJECTED',
            resultJson: null,
            failureJson: null,
            updatedAtMs: nowMs,
          })
        )
          await tx.enqueueActivityEvent(target.id, false, nowMs); // --- webhooks ---
      });
      webhookContextOf(store).wake(); // --- webhooks ---
      return reread(target);
    }

    const def = deps.definitions.get(target.type);
    const submitter = votes[0] === undefined ? undefined : await store.getUser(votes[0].userId);
    const org = await store.getOrganization(target.organizationId);
    if (def === undefined || submitter === undefined || org === undefined)
      throw new CountersignError('INTERNAL', `activity ${target.id} cannot be resumed`);
    const params = JSON.parse(target.intentJson) as Params;
    const ctx = {
      store,
      vault: deps.vault,
      organization: org,
      user: submitter,
      activityId: target.id,
      nowMs,
    };

    // The facts are taken again: the key or the transaction's description may read differently now.
    let failure: CountersignError | undefined;
    let decision: PolicyDecision | undefined;
    try {
      const facts = def.facts === undefined ? {} : await def.facts(ctx, params);
      decision = await evaluateGate({
        store,
        organization: org,
        type: def.type,
        params,
        facts,
        votes: [...votes, v],
        nowMs,
      });
    } catch (e) {
      if (!isCountersignError(e)) throw e;
      failure = e;
    }
    const evaluation =
      decision === undefined ? undefined : evaluationRecord(target.id, org.id, v.id, decision, nowMs);
    const fail = async (err: CountersignError): Promise<ActivityRecord> => {
      await store.write(async (tx) => {
        await tx.insertVote(v);
        if (evaluation !== undefined) await tx.insertPolicyEvaluation(evaluation);
        if (
          await tx.updateActivity(target.id, PENDING, {
            status: 'ACTIVITY_STATUS_FAILED',
            resultJson: null,
            failureJson: JSON.stringify(toRpcStatus(err)),
            updatedAtMs: nowMs,
          })
        )
          await tx.enqueueActivityEvent(target.id, false, nowMs); // --- webhooks ---
      });
      webhookContextOf(store).wake(); // --- webhooks ---
      return reread(target);
    };
    if (failure !== undefined || decision === undefined)
      return fail(failure ?? new CountersignError('INTERNAL', 'no decision'));

    switch (decision.outcome) {
      case 'OUTCOME_REQUIRES_CONSENSUS':
        await store.write(async (tx) => {
          await tx.insertVote(v);
          await tx.insertPolicyEvaluation(evaluation!);
          await tx.updateActivity(target.id, PENDING, {
            status: PENDING,
            resultJson: null,
            failureJson: null,
            updatedAtMs: nowMs,
          });
        });
        return reread(target);
      case 'OUTCOME_DENY_EXPLICIT':
      case 'OUTCOME_DENY_IMPLICIT': {
        // A policy added since the submission now denies it: the activity ends, nothing runs.
        const how = decision.outcome === 'OUTCOME_DENY_EXPLICIT' ? 'explicitly' : 'implicitly';
        return fail(new CountersignError('POLICY_DENIED', `policy engine denied request ${how}`));
      }
      case 'OUTCOME_ALLOW': {
        try {
          const outcome = await def.run(ctx, params);
          // Proofs were asked for at submission ('[]' recorded then); they name this completion.
          const appProofs =
            target.appProofsJson == null
              ? undefined
              : await appProofsJson(
                  { store, vault: ctx.vault },
                  { activityId: target.id, activityType: def.type, organizationId: org.id, nowMs },
                  params,
                  outcome.result,
                );
          await store.write(async (tx) => {
            const held = await tx.lockActivity(target.id);
            if (held?.leaseOwner !== deps.replicaId)
              throw new CountersignError('INTERNAL', `activity ${target.id} was decided concurrently`);
            await outcome.write?.(tx);
            await tx.insertVote(v);
            await tx.insertPolicyEvaluation(evaluation!);
            if (
              !(await tx.updateActivity(target.id, PENDING, {
                status: 'ACTIVITY_STATUS_COMPLETED',
                resultJson: JSON.stringify(outcome.result),
                failureJson: null,
                updatedAtMs: nowMs,
                ...(appProofs === undefined ? {} : { appProofsJson: appProofs }),
              }))
            )
              throw new CountersignError('INTERNAL', `activity ${target.id} was decided concurrently`);
            await tx.enqueueActivityEvent(target.id, false, nowMs); // --- webhooks ---
          });
          webhookContextOf(store).wake(); // --- webhooks ---
        } catch (e) {
          if (!isCountersignError(e)) throw e;
          return fail(e);
        }
        return reread(target);
      }
      default: {
        const never: never = decision.outcome;
        throw new CountersignError('INTERNAL', `unknown outcome ${String(never)}`);
      }
    }
  }

  return async (input) => {
    const fingerprint = reqString(input.params, 'fingerprint', 'parameters');
    const target = await store.getActivityByFingerprint(fingerprint);
    if (target === undefined)
      throw new CountersignError(
        'RESOURCE_NOT_FOUND',
        'No activity found with fingerprint. Consensus activities must target an existing activity by fingerprint',
        { field: 'parameters.fingerprint' },
      );
    if (target.organizationId !== input.organization.id)
      throw new CountersignError(
        'ORGANIZATION_MISMATCH',
        `organization mismatch: request is targeting organization (${target.organizationId}), but voters are in organization (${input.organization.id})`,
        { field: 'organizationId' },
      );
    // In turn within this process, then under the activity's lease across replicas; read again
    // under it: an earlier vote (here or elsewhere) may have just decided it.
    return serialized(target.id, async () => {
      let pause = 5;
      for (;;) {
        const t = Date.now();
        const leased = await store.write(
          async (tx) => await tx.leaseActivity(target.id, PENDING, deps.replicaId, t, t + deps.leaseMs),
        );
        const current = (await store.getActivity(target.organizationId, target.id)) ?? target;
        if (!leased && current.status === PENDING) {
          await sleep(pause);
          pause = Math.min(pause * 2, 100);
          continue;
        }
        try {
          return await vote(input, current);
        } finally {
          if (leased)
            await store.write(async (tx) => await tx.releaseActivityLease(target.id, deps.replicaId));
        }
      }
    });
  };
}
