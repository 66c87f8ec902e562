import { describe, expect, it } from 'vitest';
import { parseExpression } from './parseExpression.js';
import {
  evaluatePolicies,
  type EvaluatePoliciesInput,
  type PolicyToEvaluate,
  type PolicyUser,
} from './evaluatePolicies.js';

const NOW = new Date('2026-03-16T10:00:00Z'); // a Monday

const USERS: Record<string, PolicyUser> = {
  alice: { id: 'alice', tags: ['signers'], email: 'alice@example.com' },
  bob: { id: 'bob', tags: ['signers'] },
  carol: { id: 'carol', tags: ['signers', 'ops'], alias: 'c' },
  root: { id: 'root', tags: [] },
  root2: { id: 'root2', tags: [] },
};

const FACTS = {
  activity: {
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    kind: 'SIGN_TRANSACTION',
    resource: 'PRIVATE_KEY',
    action: 'SIGN',
    params: { type: 'TRANSACTION_TYPE_ETHEREUM' },
  },
  private_key: { id: 'pk-1', tags: [], imported: false, exported: false, label: 'k' },
};

function decide(policies: PolicyToEvaluate[], over: Partial<EvaluatePoliciesInput> = {}) {
  return evaluatePolicies({
    policies,
    facts: FACTS,
    approvers: [USERS['alice'] as PolicyUser],
    credentials: [],
    rootQuorum: { threshold: 2, approverUserIds: ['root', 'root2'] },
    now: NOW,
    ...over,
  });
}

const allowSign: PolicyToEvaluate = {
  policyId: 'allow-sign',
  effect: 'EFFECT_ALLOW',
  condition: "activity.action == 'SIGN'",
};

describe('evaluatePolicies: order of 8.2', () => {
  it('denies implicitly when nothing applies', () => {
    expect(decide([])).toEqual({
      outcome: 'OUTCOME_DENY_IMPLICIT',
      rootQuorumReached: false,
      policyEvaluations: [],
    });
    const d = decide([{ policyId: 'p', effect: 'EFFECT_ALLOW', condition: "activity.action == 'EXPORT'" }]);
    expect(d.outcome).toBe('OUTCOME_DENY_IMPLICIT');
    expect(d.policyEvaluations).toEqual([{ policyId: 'p', outcome: 'OUTCOME_DENY_IMPLICIT' }]);
  });

  it('allows when an ALLOW policy applies; absent condition and consensus mean true', () => {
    expect(decide([allowSign]).outcome).toBe('OUTCOME_ALLOW');
    expect(decide([{ policyId: 'all', effect: 'EFFECT_ALLOW' }]).outcome).toBe('OUTCOME_ALLOW');
    expect(
      decide([{ policyId: 'blank', effect: 'EFFECT_ALLOW', condition: '', consensus: ' ' }]).outcome,
    ).toBe('OUTCOME_ALLOW');
  });

  it('lets an applicable DENY beat any ALLOW, whatever the order', () => {
    const deny: PolicyToEvaluate = {
      policyId: 'deny-pk',
      effect: 'EFFECT_DENY',
      condition: "private_key.id == 'pk-1'",
    };
    for (const policies of [
      [allowSign, deny],
      [deny, allowSign],
    ]) {
      const d = decide(policies);
      expect(d.outcome).toBe('OUTCOME_DENY_EXPLICIT');
      expect(d.policyEvaluations).toHaveLength(2);
      expect(d.policyEvaluations.find((e) => e.policyId === 'allow-sign')?.outcome).toBe('OUTCOME_ALLOW');
    }
  });

  it('lets a root quorum bypass policies, still recording every evaluation', () => {
    const deny: PolicyToEvaluate = { policyId: 'deny-all', effect: 'EFFECT_DENY' };
    const approvers = [USERS['alice'], USERS['root'], USERS['root2']] as PolicyUser[];
    const d = decide([deny], { approvers });
    expect(d).toEqual({
      outcome: 'OUTCOME_ALLOW',
      rootQuorumReached: true,
      policyEvaluations: [{ policyId: 'deny-all', outcome: 'OUTCOME_DENY_EXPLICIT' }],
    });
    // One root of a 2-root quorum is not enough; the same root twice counts once.
    const one = decide([deny], { approvers: [USERS['root'], USERS['root']] as PolicyUser[] });
    expect(one).toMatchObject({ outcome: 'OUTCOME_DENY_EXPLICIT', rootQuorumReached: false });
    // A threshold of 0 never counts as reached.
    expect(decide([], { rootQuorum: { threshold: 0, approverUserIds: [] } }).rootQuorumReached).toBe(false);
  });

  it('asks for consensus while a 2-of-3 tagged quorum is short, and allows once it is met', () => {
    const policy: PolicyToEvaluate = {
      policyId: 'two-signers',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'SIGN'",
      consensus: "approvers.filter(u, u.tags.contains('signers')).count() >= 2",
    };
    const first = decide([policy], { approvers: [USERS['alice']] as PolicyUser[] });
    expect(first.outcome).toBe('OUTCOME_REQUIRES_CONSENSUS');
    expect(first.policyEvaluations).toEqual([
      { policyId: 'two-signers', outcome: 'OUTCOME_REQUIRES_CONSENSUS' },
    ]);
    const untagged = decide([policy], { approvers: [USERS['alice'], USERS['root']] as PolicyUser[] });
    expect(untagged.outcome).toBe('OUTCOME_REQUIRES_CONSENSUS');
    const second = decide([policy], { approvers: [USERS['alice'], USERS['carol']] as PolicyUser[] });
    expect(second.outcome).toBe('OUTCOME_ALLOW');
  });

  it('does not ask for consensus on behalf of a DENY policy, and a pending DENY does not block', () => {
    const pendingDeny: PolicyToEvaluate = {
      policyId: 'deny-with-ops',
      effect: 'EFFECT_DENY',
      consensus: "approvers.any(u, u.tags.contains('ops'))",
    };
    expect(decide([pendingDeny]).outcome).toBe('OUTCOME_DENY_IMPLICIT');
    expect(decide([pendingDeny, allowSign]).outcome).toBe('OUTCOME_ALLOW');
    expect(decide([pendingDeny, allowSign], { approvers: [USERS['carol']] as PolicyUser[] }).outcome).toBe(
      'OUTCOME_DENY_EXPLICIT',
    );
  });

  it('gates on credentials through consensus', () => {
    const policy: PolicyToEvaluate = {
      policyId: 'webauthn',
      effect: 'EFFECT_ALLOW',
      consensus: "credentials.any(c, c.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')",
    };
    const cred = (type: string) => ({
      id: 'c1',
      userId: 'alice',
      type,
      credentialId: 'cid',
      publicKey: '02ab',
    });
    expect(decide([policy], { credentials: [cred('CREDENTIAL_TYPE_API_KEY_P256')] }).outcome).toBe(
      'OUTCOME_REQUIRES_CONSENSUS',
    );
    expect(decide([policy], { credentials: [cred('CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')] }).outcome).toBe(
      'OUTCOME_ALLOW',
    );
    const byUser: PolicyToEvaluate = {
      policyId: 'alice-key',
      effect: 'EFFECT_ALLOW',
      consensus:
        "credentials.any(c, c.user_id == 'alice' && c.credential_id == 'cid' && c.public_key == '02ab')",
    };
    expect(decide([byUser], { credentials: [cred('X')] }).outcome).toBe('OUTCOME_ALLOW');
  });
});

describe('evaluatePolicies: errors', () => {
  it('counts an erroring ALLOW policy as ERROR, never as ALLOW', () => {
    // wallet.id errors when signing with a private key; the true left side does not save it.
    const p: PolicyToEvaluate = {
      policyId: 'wallet-or-true',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'SIGN' || wallet.id == 'w-1'",
    };
    const d = decide([p]);
    expect(d.outcome).toBe('OUTCOME_DENY_IMPLICIT');
    expect(d.policyEvaluations).toEqual([
      {
        policyId: 'wallet-or-true',
        outcome: 'OUTCOME_ERROR',
        error: "MissingField at line 1 column 30: 'wallet' is not available for this request",
      },
    ]);
  });

  it('makes a policy an error when its consensus errors even though its condition is false', () => {
    const p: PolicyToEvaluate = {
      policyId: 'p',
      effect: 'EFFECT_ALLOW',
      condition: 'false',
      consensus: 'approvers[5].id == 1',
    };
    expect(decide([p]).policyEvaluations[0]).toMatchObject({ outcome: 'OUTCOME_ERROR' });
  });

  it('does not let an erroring DENY policy deny (it neither allows nor denies)', () => {
    const guard: PolicyToEvaluate = {
      policyId: 'deny-no-op',
      effect: 'EFFECT_DENY',
      condition: "activity.params.hash_function == 'HASH_FUNCTION_NO_OP'",
    };
    const d = decide([guard, allowSign]);
    expect(d.outcome).toBe('OUTCOME_ALLOW');
    expect(d.policyEvaluations[0]).toMatchObject({
      outcome: 'OUTCOME_ERROR',
      error: expect.stringContaining('MissingField'),
    });
  });

  it('makes a non-bool expression, or a stored source that no longer parses, an error', () => {
    const d = decide([
      { policyId: 'int', effect: 'EFFECT_ALLOW', condition: '1' },
      { policyId: 'bad', effect: 'EFFECT_ALLOW', condition: 'activity.action ==' },
      { policyId: 'unknown', effect: 'EFFECT_ALLOW', condition: "nope == 'x'" },
    ]);
    expect(d.outcome).toBe('OUTCOME_DENY_IMPLICIT');
    expect(d.policyEvaluations.map((e) => e.outcome)).toEqual([
      'OUTCOME_ERROR',
      'OUTCOME_ERROR',
      'OUTCOME_ERROR',
    ]);
    expect(d.policyEvaluations[0]?.error).toContain('the condition must evaluate to a bool, got int');
    expect(d.policyEvaluations[1]?.error).toContain('invalid policy expression at line 1 column 19');
  });

  it('accepts expressions already parsed', () => {
    const condition = parseExpression("activity.kind == 'SIGN_TRANSACTION'", 'c');
    expect(decide([{ policyId: 'p', effect: 'EFFECT_ALLOW', condition }]).outcome).toBe('OUTCOME_ALLOW');
  });
});

describe('evaluatePolicies: time', () => {
  const march: PolicyToEvaluate = {
    ...allowSign,
    policyId: 'march',
    time: "time.now >= Timestamp('2026-03-01T00:00:00Z') && time.now < Timestamp('2026-04-01T00:00:00Z')",
  };

  it('applies a policy inside its one-shot window (start inclusive, end exclusive)', () => {
    expect(decide([march], { now: new Date('2026-03-01T00:00:00Z') }).outcome).toBe('OUTCOME_ALLOW');
    expect(decide([march], { now: new Date('2026-03-31T23:59:59.999Z') }).outcome).toBe('OUTCOME_ALLOW');
  });

  it('skips a policy outside its window as TIME_INACTIVE', () => {
    const d = decide([march], { now: new Date('2026-04-01T00:00:00Z') });
    expect(d).toEqual({
      outcome: 'OUTCOME_DENY_IMPLICIT',
      rootQuorumReached: false,
      policyEvaluations: [{ policyId: 'march', outcome: 'OUTCOME_TIME_INACTIVE' }],
    });
  });

  it('applies a time-gated DENY only inside its window', () => {
    const weekendDeny: PolicyToEvaluate = {
      policyId: 'weekend-deny',
      effect: 'EFFECT_DENY',
      time: "CronSpan('0 0 * * 6', '2d', 'UTC')",
    };
    expect(decide([weekendDeny, allowSign], { now: new Date('2026-03-21T12:00:00Z') }).outcome).toBe(
      'OUTCOME_DENY_EXPLICIT',
    );
    expect(decide([weekendDeny, allowSign], { now: new Date('2026-03-23T00:00:00Z') }).outcome).toBe(
      'OUTCOME_ALLOW',
    );
  });

  it('allows signing only in business hours', () => {
    const hours: PolicyToEvaluate = {
      ...allowSign,
      policyId: 'hours',
      time: "CronSpan('0 9 * * 1-5', '8h', 'UTC')",
    };
    expect(decide([hours], { now: new Date('2026-03-16T16:59:00Z') }).outcome).toBe('OUTCOME_ALLOW');
    expect(decide([hours], { now: new Date('2026-03-16T17:00:00Z') }).policyEvaluations[0]?.outcome).toBe(
      'OUTCOME_TIME_INACTIVE',
    );
  });
});
