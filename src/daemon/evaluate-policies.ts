/**
 * `Signer.EvaluatePolicies`: a dry run of SignTransaction, SignRawPayloads, SignMessage or
 * SendEthTransaction. The wrapped request goes through the very flow that would serve it, so the
 * activity evaluated is byte for byte the one it would submit (same validation, serialization,
 * digests and signer checks), and its `{type, parameters}` go to the public API's
 * `evaluate_policies` query instead. SignTransaction runs its build step alone; the other flows
 * are stopped at the point of submitting. Nothing is submitted, signed or recorded.
 */
import type { BuildActivityBodyOptions, PublicApiClient } from '../client/client.js';
import { CountersignError, invalid, isCountersignError, missing } from '../shared/errors.js';
import type { CallContext, DaemonContext } from './context.js';
import {
  DECISION_OUTCOMES,
  POLICY_OUTCOMES,
  type DecisionOutcome,
  type EvaluatePoliciesRequest,
  type EvaluatePoliciesResponse,
  type PolicyEvaluationMessage,
  type PolicyOutcome,
} from './proto.js';
import { sendEthTransaction } from './send-eth-transaction.js';
import { signMessage } from './sign-message.js';
import { signRawPayloads } from './sign-raw-payloads.js';
import { prepareSignTransaction, type PreparedSignTransaction } from './sign-transaction.js';

/** What the flow would have submitted. */
interface BuiltActivity {
  readonly organizationId: string;
  readonly type: string;
  readonly parameters: Record<string, unknown>;
}

/** Thrown by the dry-run client where the flow submits: it ends the flow before anything is sent. */
class ActivityBuilt extends Error {
  constructor(readonly activity: BuiltActivity) {
    super('activity built (dry run)');
  }
}

/** Handles one EvaluatePolicies call. */
export async function evaluatePolicies(
  ctx: DaemonContext,
  call: CallContext,
  req: EvaluatePoliciesRequest,
): Promise<EvaluatePoliciesResponse> {
  const built = await buildActivity(ctx, call, req);
  const json = await ctx.client.query<unknown>('evaluate_policies', {
    organizationId: built.organizationId,
    activity: { type: built.type, parameters: built.parameters },
  });
  const res = parseDecision(json, built);
  call.log.info(
    { activityType: built.type, organizationId: built.organizationId, outcome: res.outcome },
    'policies evaluated (dry run)',
  );
  return res;
}

/** Runs the request's own flow against a client whose `submit` stops it with the built activity. */
async function buildActivity(
  ctx: DaemonContext,
  call: CallContext,
  req: EvaluatePoliciesRequest,
): Promise<BuiltActivity> {
  let last: BuildActivityBodyOptions | undefined;
  const real = ctx.client;
  // Only the three members the flows use; query (the signer lookups) goes to the real client.
  const dryClient = {
    organizationId: real.organizationId,
    buildActivityBody(o: BuildActivityBodyOptions): Uint8Array {
      last = o;
      return real.buildActivityBody(o);
    },
    submit(): Promise<never> {
      if (last === undefined) throw new CountersignError('INTERNAL', 'submit before an activity was built');
      throw new ActivityBuilt({
        organizationId: last.organizationId ?? real.organizationId,
        type: last.type,
        parameters: last.parameters,
      });
    },
    query: <T>(name: string, body: Record<string, unknown>): Promise<T> => real.query<T>(name, body),
  };
  // PublicApiClient has private fields, so a structural stand-in needs the cast; the flows reach
  // the client only through the members above (and submit-activity.ts, which calls the first two).
  const dry: DaemonContext = { ...ctx, client: dryClient as unknown as PublicApiClient };
  try {
    switch (req.request) {
      case 'signTransaction': {
        const r = req.signTransaction;
        if (r === undefined) throw missing('sign_transaction');
        if (r.feePayerSignWith !== '')
          throw invalid(
            'sign_transaction.fee_payer_sign_with',
            'a dry run evaluates one activity; evaluate the sender and the fee payer separately',
          );
        // The build step alone, with the real client: it submits nothing, so nothing needs stopping.
        let prepared: PreparedSignTransaction | undefined;
        await inRequest('sign_transaction', async () => {
          prepared = await prepareSignTransaction(ctx, { ...r, idempotencyKey: '' });
        });
        const [only, ...more] = prepared?.activities ?? [];
        if (only === undefined || more.length > 0)
          throw invalid(
            'sign_transaction.mode',
            'a dry run evaluates one activity; this request needs one per key type (Bitcoin raw payloads)',
          );
        return { organizationId: only.organizationId, type: only.activityType, parameters: only.parameters };
      }
      case 'signRawPayloads': {
        const r = req.signRawPayloads;
        if (r === undefined) throw missing('sign_raw_payloads');
        await inRequest('sign_raw_payloads', () => signRawPayloads(dry, call, { ...r, idempotencyKey: '' }));
        break;
      }
      case 'signMessage': {
        const r = req.signMessage;
        if (r === undefined) throw missing('sign_message');
        await inRequest('sign_message', () => signMessage(dry, call, { ...r, idempotencyKey: '' }));
        break;
      }
      case 'sendEthTransaction': {
        const r = req.sendEthTransaction;
        if (r === undefined) throw missing('send_eth_transaction');
        await inRequest('send_eth_transaction', () =>
          sendEthTransaction(dry, call, { ...r, idempotencyKey: '' }),
        );
        break;
      }
      case undefined:
        throw new CountersignError(
          'FIELD_MISSING',
          'request: one of sign_transaction, sign_raw_payloads, sign_message, send_eth_transaction is required',
          { field: 'request' },
        );
      default: {
        const never: never = req.request;
        throw invalid('request', `unknown request ${String(never)}`);
      }
    }
  } catch (e) {
    if (e instanceof ActivityBuilt) return e.activity;
    throw e;
  }
  throw new CountersignError('INTERNAL', 'the flow ended without building an activity');
}

/** Runs a flow, re-homing the field its errors name (`ethereum.to`) onto this request's. */
async function inRequest(prefix: string, step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch (e) {
    if (!isCountersignError(e) || e.field === undefined) throw e;
    const field = `${prefix}.${e.field}`;
    const message = e.message.startsWith(`${e.field}:`) ? `${prefix}.${e.message}` : `${field}: ${e.message}`;
    throw new CountersignError(e.code, message, { field, cause: e, meta: e.meta });
  }
}

/** Validates the query's answer `{outcome, rootQuorumReached, policyEvaluations}`. */
function parseDecision(json: unknown, built: BuiltActivity): EvaluatePoliciesResponse {
  if (!isRecord(json)) throw malformed('the answer is not an object');
  const outcome = json['outcome'];
  if (!isOneOf(outcome, DECISION_OUTCOMES))
    throw malformed(`outcome ${JSON.stringify(outcome)} is not known`);
  const rootQuorumReached = json['rootQuorumReached'];
  if (typeof rootQuorumReached !== 'boolean') throw malformed('rootQuorumReached is not a boolean');
  const list = json['policyEvaluations'];
  if (!Array.isArray(list)) throw malformed('policyEvaluations is not a list');
  const policyEvaluations = list.map((e: unknown, i): PolicyEvaluationMessage => {
    if (!isRecord(e)) throw malformed(`policyEvaluations[${i}] is not an object`);
    const policyId = e['policyId'];
    const o = e['outcome'];
    const error = e['error'] ?? '';
    if (typeof policyId !== 'string') throw malformed(`policyEvaluations[${i}].policyId is not a string`);
    if (!isOneOf(o, POLICY_OUTCOMES) || o === 'OUTCOME_UNSPECIFIED')
      throw malformed(`policyEvaluations[${i}].outcome ${JSON.stringify(o)} is not known`);
    if (typeof error !== 'string') throw malformed(`policyEvaluations[${i}].error is not a string`);
    return { policyId, outcome: o, error };
  });
  return {
    outcome,
    rootQuorumReached,
    policyEvaluations,
    activityType: built.type,
    organizationId: built.organizationId,
  };
}

function isOneOf<T extends DecisionOutcome | PolicyOutcome>(v: unknown, list: readonly T[]): v is T {
  return typeof v === 'string' && (list as readonly string[]).includes(v);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function malformed(what: string): CountersignError {
  return new CountersignError('UPSTREAM_ERROR', `evaluate_policies answer is malformed: ${what}`);
}
