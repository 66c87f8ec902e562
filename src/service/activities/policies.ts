/** create_policy (V3), create_policies, delete_policy, update_policy (V2): turnkey-api.md 8.1. */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../../shared/errors.js';
import { compileExpression, compilePolicy } from '../policy/index.js';
import { POLICY_EFFECT_VALUES, type PolicyRecord, type StoreTx } from '../store/types.js';
import {
  asObject,
  optString,
  reqArray,
  reqEnum,
  reqString,
  reqUuid,
  notFound,
  type Params,
} from './params.js';
import type { ActivityDefinition, ActivityOutcome } from './types.js';

/** An expression source as stored: absent and blank both mean "always true" and are stored as null. */
const source = (v: string | undefined): string | null => (v === undefined || v.trim() === '' ? null : v);

function nameNotUnique(field: string): CountersignError {
  return new CountersignError('NAME_NOT_UNIQUE', `${field}: policy label must be unique`, { field });
}

/** Reads and checks one v1CreatePolicyIntentV3; expressions are compiled so a bad one never gets stored. */
function readPolicy(p: Params, prefix: string, organizationId: string, nowMs: number): PolicyRecord {
  const name = reqString(p, 'policyName', prefix);
  const effect = reqEnum(p, 'effect', prefix, POLICY_EFFECT_VALUES);
  const condition = optString(p, 'condition', prefix);
  const consensus = optString(p, 'consensus', prefix);
  const time = optString(p, 'time', prefix);
  const notes = optString(p, 'notes', prefix);
  compilePolicy({ condition, consensus, time }, prefix);
  return {
    id: randomUUID(),
    organizationId,
    name,
    effect,
    condition: source(condition),
    consensus: source(consensus),
    time: source(time),
    notes: notes ?? '',
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
  };
}

/** Inserts checked policies, refusing a name the organization (or this batch) already has. */
async function insertPolicies(
  tx: StoreTx,
  records: readonly PolicyRecord[],
  fieldOf: (i: number) => string,
): Promise<void> {
  const seen = new Set<string>();
  for (const [i, r] of records.entries()) {
    if (seen.has(r.name) || (await tx.policyNameTaken(r.organizationId, r.name)))
      throw nameNotUnique(fieldOf(i));
    seen.add(r.name);
    await tx.insertPolicy(r);
  }
}

export const POLICY_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
    path: 'create_policy',
    intentKey: 'createPolicyIntentV3',
    resultKey: 'createPolicyResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const r = readPolicy(p, 'parameters', ctx.organization.id, ctx.nowMs);
      return {
        result: { policyId: r.id },
        write: async (tx) => insertPolicies(tx, [r], () => 'parameters.policyName'),
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_POLICIES',
    path: 'create_policies',
    intentKey: 'createPoliciesIntent',
    resultKey: 'createPoliciesResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const list = reqArray(p, 'policies', 'parameters');
      if (list.length === 0) throw invalid('parameters.policies', 'must hold at least one policy');
      const records = list.map((item, i) =>
        readPolicy(
          asObject(item, `parameters.policies.${i}`),
          `parameters.policies.${i}`,
          ctx.organization.id,
          ctx.nowMs,
        ),
      );
      return {
        result: { policyIds: records.map((r) => r.id) },
        write: async (tx) => insertPolicies(tx, records, (i) => `parameters.policies.${i}.policyName`),
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_POLICY',
    path: 'delete_policy',
    intentKey: 'deletePolicyIntent',
    resultKey: 'deletePolicyResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'policyId', 'parameters');
      const org = ctx.organization.id;
      return {
        result: { policyId: id },
        write: async (tx) => {
          if (!(await tx.deletePolicy(org, id))) throw notFound('parameters.policyId', 'policy');
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_POLICY_V2',
    path: 'update_policy',
    intentKey: 'updatePolicyIntentV2',
    resultKey: 'updatePolicyResultV2',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const prefix = 'parameters';
      const id = reqUuid(p, 'policyId', prefix);
      const name = optString(p, 'policyName', prefix);
      if (name === '') throw invalid(`${prefix}.policyName`, 'must not be empty');
      const effect =
        p.policyEffect === undefined || p.policyEffect === null
          ? undefined
          : reqEnum(p, 'policyEffect', prefix, POLICY_EFFECT_VALUES);
      const condition = optString(p, 'policyCondition', prefix);
      const consensus = optString(p, 'policyConsensus', prefix);
      const time = optString(p, 'time', prefix);
      const notes = optString(p, 'policyNotes', prefix);
      compileExpression(condition, 'condition', `${prefix}.policyCondition`);
      compileExpression(consensus, 'consensus', `${prefix}.policyConsensus`);
      compileExpression(time, 'time', `${prefix}.time`);
      const org = ctx.organization.id;
      const nowMs = ctx.nowMs;
      return {
        result: { policyId: id },
        write: async (tx) => {
          const old = await tx.getPolicy(org, id);
          if (old === undefined) throw notFound(`${prefix}.policyId`, 'policy');
          if (name !== undefined && (await tx.policyNameTaken(org, name, id)))
            throw nameNotUnique(`${prefix}.policyName`);
          // An absent field keeps its value; a present one (even '') replaces it.
          await tx.updatePolicy({
            ...old,
            name: name ?? old.name,
            effect: effect ?? old.effect,
            condition: condition === undefined ? old.condition : source(condition),
            consensus: consensus === undefined ? old.consensus : source(consensus),
            time: time === undefined ? old.time : source(time),
            notes: notes ?? old.notes,
            updatedAtMs: nowMs,
          });
        },
      };
    },
  },
];
