/**
 * The policy gate every activity passes before it changes anything (turnkey-api.md 8.2): it gathers
 * the policies, the root quorum and the approvals that still count, and asks the engine.
 */
import { CountersignError } from '../../shared/errors.js';
import {
  buildFacts,
  evaluatePolicies,
  type PolicyCredential,
  type PolicyDecision,
  type PolicyUser,
} from '../policy/index.js';
import { uuidv7 } from '../ids.js';
import type { ActivityFacts } from './types.js';
import type { Params } from './params.js';
import type { OrganizationRecord, PolicyEvaluationRecord, Store, VoteRecord } from '../store/types.js';

// --- other resources ---
/** Activities only the root quorum may approve (turnkey-api.md 8.2); policies cannot grant them. */
export const ROOT_QUORUM_ONLY: ReadonlySet<string> = new Set([
  'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
  'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
  'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM',
  'ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME',
]);

/** How much a decision holds a request back: a batch takes the most restrictive of its calls'. */
const RESTRICTIVENESS: Readonly<Record<PolicyDecision['outcome'], number>> = {
  OUTCOME_ALLOW: 0,
  OUTCOME_REQUIRES_CONSENSUS: 1,
  OUTCOME_DENY_IMPLICIT: 2,
  OUTCOME_DENY_EXPLICIT: 3,
};

/** Votes lapse this long after they were cast (turnkey-api.md 3.3: a 24-hour window). */
export const VOTE_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface GateInput {
  readonly store: Store;
  readonly organization: OrganizationRecord;
  readonly type: string;
  readonly params: Params;
  readonly facts: ActivityFacts;
  /** Every vote cast on the request so far, the submitter's first. */
  readonly votes: readonly VoteRecord[];
  readonly nowMs: number;
}

function credentialTypeOf(scheme: string): string {
  switch (scheme) {
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1':
      return 'CREDENTIAL_TYPE_API_KEY_SECP256K1';
    case 'SIGNATURE_SCHEME_TK_API_ED25519':
      return 'CREDENTIAL_TYPE_API_KEY_ED25519';
    default:
      return 'CREDENTIAL_TYPE_API_KEY_P256';
  }
}

/** The approvals that still count at `nowMs`: approved, not lapsed, one per user (the earliest). */
export function liveApprovals(votes: readonly VoteRecord[], nowMs: number): VoteRecord[] {
  const seen = new Set<string>();
  const out: VoteRecord[] = [];
  for (const v of votes) {
    if (v.selection !== 'VOTE_SELECTION_APPROVED' || nowMs - v.createdAtMs > VOTE_LIFETIME_MS) continue;
    if (seen.has(v.userId)) continue;
    seen.add(v.userId);
    out.push(v);
  }
  return out;
}

/** Evaluates every policy of the organization over one request and the approvals so far. */
export async function evaluateGate(input: GateInput): Promise<PolicyDecision> {
  const { store, organization: org, nowMs } = input;
  const approvals = liveApprovals(input.votes, nowMs);
  const approvers: PolicyUser[] = [];
  for (const v of approvals) {
    const u = await store.getUser(v.userId);
    if (u === undefined || u.organizationId !== org.id) continue;
    // Tags are compared by id, as Turnkey's `user.tags.contains('<TAG_ID>')` policies do.
    const tags = await store.listUserTagIds(u.id);
    approvers.push({ id: u.id, tags, ...(u.email === null ? {} : { email: u.email }), alias: u.name });
  }
  const counted = new Set(approvers.map((a) => a.id));
  const credentials: PolicyCredential[] = approvals
    .filter((v) => counted.has(v.userId))
    .map((v) => ({
      id: v.id,
      userId: v.userId,
      type: credentialTypeOf(v.scheme),
      credentialId: v.publicKey,
      publicKey: v.publicKey,
    }));
  const roots = (await store.listUsers(org.id)).filter((u) => u.isRoot).map((u) => u.id);
  const policies = (await store.listPolicies(org.id)).map((p) => ({
    policyId: p.id,
    effect: p.effect,
    condition: p.condition ?? undefined,
    consensus: p.consensus ?? undefined,
    time: p.time ?? undefined,
  }));
  const { batch, ...common } = input.facts;
  const evaluate = (transaction: ActivityFacts['transaction']) =>
    evaluatePolicies({
      policies,
      facts: buildFacts({
        activity: { type: input.type, parameters: input.params },
        ...common,
        ...(transaction === undefined ? {} : { transaction }),
      }),
      approvers,
      credentials,
      rootQuorum: { threshold: org.rootQuorumThreshold, approverUserIds: roots },
      now: new Date(nowMs),
    });
  // A batch is judged call by call, each as its own `eth.tx`: it passes only if every call would
  // pass on its own, and the decision recorded is the most restrictive one.
  const decision =
    batch === undefined || batch.length === 0
      ? evaluate(common.transaction)
      : batch
          .map(evaluate)
          .reduce((worst, d) => (RESTRICTIVENESS[d.outcome] > RESTRICTIVENESS[worst.outcome] ? d : worst));
  // --- other resources --- root-quorum-only activities (turnkey-api.md 8.2): no policy grants them;
  // short of the root quorum they wait for more root approvals, or are denied if no root approved.
  if (!ROOT_QUORUM_ONLY.has(input.type) || decision.rootQuorumReached) return decision;
  const rootApproved = approvers.some((a) => roots.includes(a.id));
  return { ...decision, outcome: rootApproved ? 'OUTCOME_REQUIRES_CONSENSUS' : 'OUTCOME_DENY_IMPLICIT' };
}

/** The per-policy outcomes as the wire and the record show them. */
export function evaluationsJson(d: PolicyDecision): Record<string, unknown>[] {
  return d.policyEvaluations.map((e) => ({
    policyId: e.policyId,
    outcome: e.outcome,
    ...(e.error === undefined ? {} : { error: e.error }),
  }));
}

/** The record of one evaluation, written with the state change (or vote) it decided. */
export function evaluationRecord(
  activityId: string,
  organizationId: string,
  voteId: string | null,
  decision: PolicyDecision,
  nowMs: number,
): PolicyEvaluationRecord {
  return {
    id: uuidv7(nowMs), // time-ordered, as the vote's: its primary key's index grows at its end
    activityId,
    organizationId,
    voteId,
    outcome: decision.outcome,
    resultsJson: JSON.stringify(evaluationsJson(decision)),
    createdAtMs: nowMs,
  };
}

/** HTTP 403 code 7 for an explicit or implicit deny; nothing has been written. */
export function policyDenied(decision: PolicyDecision): CountersignError {
  const how = decision.outcome === 'OUTCOME_DENY_EXPLICIT' ? 'explicitly' : 'implicitly';
  return new CountersignError('POLICY_DENIED', `policy engine denied request ${how}`, {
    meta: { outcome: decision.outcome, policyEvaluations: evaluationsJson(decision) },
  });
}
