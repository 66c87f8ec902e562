import { CountersignError } from '../../shared/errors.js';
import type { Expr } from './ast.js';
import { compileExpression, type PolicyExpressionRole } from './compilePolicy.js';
import { evaluate, type EvaluationEnv } from './evaluate.js';
import { printExpression } from './printExpression.js';
import { PolicyEvaluationError, typeName } from './values.js';
import {
  DECISION_OUTCOMES,
  POLICY_OUTCOMES,
  type DecisionOutcome,
  type PolicyOutcome,
} from '../../shared/enums.js';

export const POLICY_EFFECTS = ['EFFECT_ALLOW', 'EFFECT_DENY'] as const;
export type PolicyEffect = (typeof POLICY_EFFECTS)[number];

export { DECISION_OUTCOMES, POLICY_OUTCOMES, type DecisionOutcome, type PolicyOutcome };

/** A policy as evaluated: expressions as stored source or as already parsed trees; absent or '' = true. */
export interface PolicyToEvaluate {
  readonly policyId: string;
  readonly effect: PolicyEffect;
  readonly condition?: string | Expr | undefined;
  readonly consensus?: string | Expr | undefined;
  readonly time?: string | Expr | undefined;
}

/** An approver as `approvers` shows it: User{id, tags, email, alias} (absent email and alias read as ''). */
export interface PolicyUser {
  readonly id: string;
  readonly tags: readonly string[];
  readonly email?: string | undefined;
  readonly alias?: string | undefined;
}

/** A credential an approver used, as `credentials` shows it (snake_case in the language). */
export interface PolicyCredential {
  readonly id: string;
  readonly userId: string;
  /** CREDENTIAL_TYPE_… */
  readonly type: string;
  readonly credentialId: string;
  readonly publicKey: string;
}

export interface RootQuorum {
  readonly threshold: number;
  /** The root quorum's members; those of them among the approvers count toward `threshold`. */
  readonly approverUserIds: readonly string[];
}

export interface EvaluatePoliciesInput {
  readonly policies: readonly PolicyToEvaluate[];
  /** The condition keywords, as `buildFacts` builds them. */
  readonly facts: Readonly<Record<string, unknown>>;
  /** Everyone who has approved so far (the submitter first). */
  readonly approvers: readonly PolicyUser[];
  readonly credentials: readonly PolicyCredential[];
  readonly rootQuorum: RootQuorum;
  /** Trusted server time. */
  readonly now: Date;
}

export interface PolicyEvaluation {
  readonly policyId: string;
  readonly outcome: PolicyOutcome;
  /** Why the policy errored (OUTCOME_ERROR only). */
  readonly error?: string;
}

export interface PolicyDecision {
  readonly outcome: DecisionOutcome;
  readonly rootQuorumReached: boolean;
  /** One entry per policy, in the order given, whatever the decision. */
  readonly policyEvaluations: readonly PolicyEvaluation[];
}

const CACHE_LIMIT = 1024;
const compiled = new Map<string, Expr | CountersignError | undefined>();

/** Stored sources are parsed once per process; a source that no longer parses makes its policy an error. */
function expressionOf(source: string | Expr | undefined, role: PolicyExpressionRole): Expr | undefined {
  if (source === undefined || typeof source !== 'string') return source;
  const key = `${role}\u0000${source}`;
  let hit = compiled.get(key);
  if (hit === undefined && !compiled.has(key)) {
    try {
      hit = compileExpression(source, role, role);
    } catch (e) {
      if (!(e instanceof CountersignError)) throw e;
      hit = e;
    }
    if (compiled.size >= CACHE_LIMIT) compiled.clear();
    compiled.set(key, hit);
  }
  if (hit instanceof CountersignError) throw hit;
  return hit;
}

function holds(source: string | Expr | undefined, role: PolicyExpressionRole, env: EvaluationEnv): boolean {
  const expr = expressionOf(source, role);
  if (expr === undefined) return true;
  const v = evaluate(expr, env);
  if (typeof v !== 'boolean') {
    throw new PolicyEvaluationError(
      'TypeMismatch',
      expr.pos,
      `the ${role} must evaluate to a bool, got ${typeName(v)} from ${printExpression(expr)}`,
    );
  }
  return v;
}

function evaluateOne(
  p: PolicyToEvaluate,
  envs: Readonly<Record<PolicyExpressionRole, EvaluationEnv>>,
): PolicyEvaluation {
  const { policyId } = p;
  try {
    if (!holds(p.time, 'time', envs.time)) return { policyId, outcome: 'OUTCOME_TIME_INACTIVE' };
    // Both are evaluated whatever the first gives: an error in either makes the policy an error.
    const condition = holds(p.condition, 'condition', envs.condition);
    const consensus = holds(p.consensus, 'consensus', envs.consensus);
    if (!condition) return { policyId, outcome: 'OUTCOME_DENY_IMPLICIT' };
    if (!consensus) return { policyId, outcome: 'OUTCOME_REQUIRES_CONSENSUS' };
    switch (p.effect) {
      case 'EFFECT_ALLOW':
        return { policyId, outcome: 'OUTCOME_ALLOW' };
      case 'EFFECT_DENY':
        return { policyId, outcome: 'OUTCOME_DENY_EXPLICIT' };
      default: {
        const never: never = p.effect;
        throw new CountersignError('INTERNAL', `unknown policy effect ${String(never)}`);
      }
    }
  } catch (e) {
    if (e instanceof PolicyEvaluationError || (e instanceof CountersignError && e.code === 'FIELD_INVALID')) {
      return { policyId, outcome: 'OUTCOME_ERROR', error: e.message };
    }
    throw e;
  }
}

/**
 * Decides a request (turnkey-api.md 8.2). Every policy is evaluated and recorded; then: root quorum
 * reached → ALLOW; any DENY policy applies → DENY_EXPLICIT; any ALLOW policy applies → ALLOW; an
 * ALLOW policy waits only for approvals → REQUIRES_CONSENSUS; else DENY_IMPLICIT. A policy that
 * errors neither allows nor denies: with no short-circuit, a guard like `activity.params.x` errors
 * on every other activity type, so treating it as a deny would block them all.
 */
export function evaluatePolicies(input: EvaluatePoliciesInput): PolicyDecision {
  const { now } = input;
  const approvers = input.approvers.map((u) => ({
    id: u.id,
    tags: [...u.tags],
    email: u.email ?? '',
    alias: u.alias ?? '',
  }));
  const credentials = input.credentials.map((c) => ({
    id: c.id,
    user_id: c.userId,
    type: c.type,
    credential_id: c.credentialId,
    public_key: c.publicKey,
  }));
  const envs: Record<PolicyExpressionRole, EvaluationEnv> = {
    condition: { bindings: input.facts, now },
    consensus: { bindings: { approvers, credentials }, now },
    time: { bindings: {}, now },
  };
  const policyEvaluations = input.policies.map((p) => evaluateOne(p, envs));

  const roots = new Set(input.rootQuorum.approverUserIds);
  const rootApprovals = new Set(input.approvers.map((u) => u.id).filter((id) => roots.has(id))).size;
  const rootQuorumReached = input.rootQuorum.threshold >= 1 && rootApprovals >= input.rootQuorum.threshold;

  const has = (effect: PolicyEffect, outcome: PolicyOutcome): boolean =>
    policyEvaluations.some((e, i) => e.outcome === outcome && input.policies[i]?.effect === effect);
  let outcome: DecisionOutcome;
  if (rootQuorumReached) outcome = 'OUTCOME_ALLOW';
  else if (has('EFFECT_DENY', 'OUTCOME_DENY_EXPLICIT')) outcome = 'OUTCOME_DENY_EXPLICIT';
  else if (has('EFFECT_ALLOW', 'OUTCOME_ALLOW')) outcome = 'OUTCOME_ALLOW';
  else if (has('EFFECT_ALLOW', 'OUTCOME_REQUIRES_CONSENSUS')) outcome = 'OUTCOME_REQUIRES_CONSENSUS';
  // A root quorum on its way (some root users approved, fewer than the threshold) waits for the rest.
  else if (rootApprovals > 0 && input.rootQuorum.threshold > rootApprovals)
    outcome = 'OUTCOME_REQUIRES_CONSENSUS';
  else outcome = 'OUTCOME_DENY_IMPLICIT';
  return { outcome, rootQuorumReached, policyEvaluations };
}
