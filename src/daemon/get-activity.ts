/**
 * `Signer.GetActivity`: where an activity stands, read with `query/get_activity`. The result of a
 * completed signing activity is returned only after it was verified locally against the
 * activity's own intent (the unsigned transaction or payloads and the key it names), with the same
 * chain adapters and digest rules the signing flows use; a result that fails is
 * SIGNATURE_VERIFICATION_FAILED and is never returned.
 */
import { isUuid } from '../shared/uuid.js';
import { parseActivityResponse, upstreamError, type Activity } from '../client/client.js';
import { hexToBytes } from '../shared/encoding.js';
import { CountersignError, isCountersignError, missing, invalid } from '../shared/errors.js';
import { rawSignaturesOf, sendTransactionStatusIdOf, signedTransactionOf } from './activity-result.js';
import { verifying } from './chains/common.js';
import { organizationOf, type CallContext, type DaemonContext } from './context.js';
import { payloadDigest, type KnownEncoding, type KnownHashFunction } from './payload-digest.js';
import {
  HASH_FUNCTIONS,
  PAYLOAD_ENCODINGS,
  type ActivityState,
  type GetActivityRequest,
  type GetActivityResponse,
  type SendTransactionResultMessage,
  type SignatureMessage,
  type VerifiedPayloadsMessage,
  type VerifiedTransactionMessage,
} from './proto.js';
import { signatureSchemeOf, verifyDigestSignature } from './verify-signature.js';
import { verifyActivityTransaction } from './sign-transaction.js';

/** States after which an activity never changes again. */
export const TERMINAL_STATES: ReadonlySet<ActivityState> = new Set([
  'ACTIVITY_STATE_COMPLETED',
  'ACTIVITY_STATE_FAILED',
  'ACTIVITY_STATE_REJECTED',
]);

/** Handles one GetActivity call. */
export async function getActivity(
  ctx: DaemonContext,
  call: CallContext,
  req: GetActivityRequest,
): Promise<GetActivityResponse> {
  const target = activityTarget(ctx, req);
  return readActivity(ctx, call, target);
}

/** The validated `{organization_id, activity_id}` of a GetActivity or WatchActivity request. */
export interface ActivityTarget {
  readonly organizationId: string;
  readonly activityId: string;
}

/** Validates the request's ids (activity_id must be a UUID), defaulting the organization. */
export function activityTarget(
  ctx: DaemonContext,
  req: { readonly organizationId: string; readonly activityId: string },
): ActivityTarget {
  if (req.activityId === '') throw missing('activity_id');
  if (!isUuid(req.activityId)) throw invalid('activity_id', 'must be a UUID');
  return { organizationId: organizationOf(ctx, req.organizationId), activityId: req.activityId };
}

/** Queries the activity and answers with its state and, when completed, its verified result. */
export async function readActivity(
  ctx: DaemonContext,
  call: CallContext,
  target: ActivityTarget,
): Promise<GetActivityResponse> {
  const json = await ctx.client.query<unknown>('get_activity', {
    organizationId: target.organizationId,
    activityId: target.activityId,
  });
  const activity = parseActivityResponse(json);
  if (activity.id !== target.activityId) {
    throw new CountersignError(
      'UPSTREAM_ERROR',
      `get_activity answered with activity ${activity.id}, not ${target.activityId}`,
    );
  }
  const base = {
    activityId: activity.id,
    organizationId: activity.organizationId,
    fingerprint: activity.fingerprint,
    type: activity.type,
    failureCode: '',
    failureMessage: '',
  };
  switch (activity.status) {
    case 'ACTIVITY_STATUS_COMPLETED': {
      const result = await verifiedResult(ctx, activity, intentOf(json));
      call.log.debug({ activityId: activity.id, result: result?.result ?? 'none' }, 'activity read');
      return { ...base, state: 'ACTIVITY_STATE_COMPLETED', ...result };
    }
    case 'ACTIVITY_STATUS_CONSENSUS_NEEDED':
      return { ...base, state: 'ACTIVITY_STATE_CONSENSUS_NEEDED' };
    case 'ACTIVITY_STATUS_CREATED':
    case 'ACTIVITY_STATUS_PENDING':
      return { ...base, state: 'ACTIVITY_STATE_PENDING' };
    case 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED':
      return { ...base, state: 'ACTIVITY_STATE_AUTHENTICATORS_NEEDED' };
    case 'ACTIVITY_STATUS_FAILED': {
      const err =
        activity.failure === undefined
          ? new CountersignError('UPSTREAM_ERROR', `activity ${activity.id} failed without a reason`)
          : upstreamError(200, activity.failure);
      return { ...base, state: 'ACTIVITY_STATE_FAILED', failureCode: err.code, failureMessage: err.message };
    }
    case 'ACTIVITY_STATUS_REJECTED':
      return {
        ...base,
        state: 'ACTIVITY_STATE_REJECTED',
        failureCode: 'UPSTREAM_PERMISSION_DENIED',
        failureMessage: activity.failure?.message || `activity ${activity.id} was rejected by a vote`,
      };
    default: {
      const never: never = activity.status;
      throw new CountersignError('UPSTREAM_ERROR', `unknown activity status ${String(never)}`);
    }
  }
}

type VerifiedResult =
  | { readonly result: 'transaction'; readonly transaction: VerifiedTransactionMessage }
  | { readonly result: 'payloads'; readonly payloads: VerifiedPayloadsMessage }
  | { readonly result: 'sendTransaction'; readonly sendTransaction: SendTransactionResultMessage }
  | undefined;

/** The signing activity types whose results are verified, with where their intent names the key. */
async function verifiedResult(
  ctx: DaemonContext,
  activity: Activity,
  intent: Readonly<Record<string, unknown>>,
): Promise<VerifiedResult> {
  switch (activity.type) {
    case 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2':
      return transactionResult(ctx, activity, intentRecord(intent, 'signTransactionIntentV2'), 'signWith');
    case 'ACTIVITY_TYPE_SIGN_TRANSACTION':
      return transactionResult(ctx, activity, intentRecord(intent, 'signTransactionIntent'), 'privateKeyId');
    case 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS': {
      const i = intentRecord(intent, 'signRawPayloadsIntent');
      const payloads = i['payloads'];
      if (!Array.isArray(payloads) || !payloads.every((p): p is string => typeof p === 'string'))
        throw malformed('signRawPayloadsIntent.payloads is not a list of strings');
      return payloadsResult(ctx, activity, i, 'signWith', payloads, activity);
    }
    case 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2':
    case 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD': {
      const v2 = activity.type === 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2';
      const i = intentRecord(intent, v2 ? 'signRawPayloadIntentV2' : 'signRawPayloadIntent');
      // One signature at signRawPayloadResult: read it through the same parser as a list of one.
      const asList: Activity = {
        ...activity,
        result: { signRawPayloadsResult: { signatures: [activity.result['signRawPayloadResult']] } },
      };
      return payloadsResult(ctx, activity, i, v2 ? 'signWith' : 'privateKeyId', [str(i, 'payload')], asList);
    }
    case 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2':
    case 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION':
      // The service signed and broadcast: the caller gets the id to follow, there is no signature.
      return {
        result: 'sendTransaction',
        sendTransaction: { sendTransactionStatusId: sendTransactionStatusIdOf(activity) },
      };
    default:
      // Not a signing activity: there is no signature to verify or return.
      return undefined;
  }
}

async function transactionResult(
  ctx: DaemonContext,
  activity: Activity,
  intent: Readonly<Record<string, unknown>>,
  signWithKey: 'signWith' | 'privateKeyId',
): Promise<VerifiedResult> {
  const signWith = str(intent, signWithKey);
  const transactionType = str(intent, 'type');
  const unsignedHex = str(intent, 'unsignedTransaction');
  const unsigned = verifying(() => hexToBytes(unsignedHex, 'unsignedTransaction'));
  const signed = signedTransactionOf(activity);
  const verified = await verifyActivityTransaction(ctx, {
    organizationId: activity.organizationId,
    transactionType,
    signWith,
    unsigned,
    signed,
  });
  return { result: 'transaction', transaction: { transactionType, signedTransaction: signed, ...verified } };
}

async function payloadsResult(
  ctx: DaemonContext,
  activity: Activity,
  intent: Readonly<Record<string, unknown>>,
  signWithKey: 'signWith' | 'privateKeyId',
  payloads: readonly string[],
  resultSource: Activity,
): Promise<VerifiedResult> {
  const signWith = str(intent, signWithKey);
  const encoding = known(str(intent, 'encoding'), PAYLOAD_ENCODINGS, 'encoding') as KnownEncoding;
  const hashFunction = known(
    str(intent, 'hashFunction'),
    HASH_FUNCTIONS,
    'hashFunction',
  ) as KnownHashFunction;
  const scheme = signatureSchemeOf(signWith);
  // A digest the daemon cannot compute from the intent is a result it cannot vouch for.
  const digests = verifying(() =>
    payloads.map((p, i) => payloadDigest(p, encoding, hashFunction, `payloads[${i}]`, scheme)),
  );
  const signer =
    scheme === 'ED25519' ? signWith : await expectedSigner(ctx, activity.organizationId, signWith);
  const signatures = rawSignaturesOf(resultSource, digests.length);
  const out: SignatureMessage[] = signatures.map((sig, i) => {
    const digest = digests[i];
    if (digest === undefined) throw new CountersignError('INTERNAL', 'digest count mismatch');
    verifyDigestSignature(digest, sig, signer, `payloads[${i}]`);
    return { r: sig.r, s: sig.s, v: sig.v };
  });
  return { result: 'payloads', payloads: { signatures: out, digests, signer } };
}

/**
 * The signer the activity's key must recover to, resolved as SignTransaction resolves `sign_with`.
 * A key the resolver cannot name an Ethereum address for cannot be verified: the result is withheld.
 */
async function expectedSigner(ctx: DaemonContext, organizationId: string, signWith: string): Promise<string> {
  try {
    return await ctx.signers.resolve(organizationId, signWith);
  } catch (e) {
    if (isCountersignError(e) && e.field === 'sign_with') {
      throw new CountersignError(
        'SIGNATURE_VERIFICATION_FAILED',
        `cannot verify the result: the activity's key ${signWith} has no expected signer (${e.message})`,
        { cause: e },
      );
    }
    throw e;
  }
}

/** `activity.intent` of the raw get_activity answer (parseActivityResponse keeps only the result). */
function intentOf(json: unknown): Readonly<Record<string, unknown>> {
  const activity = isRecord(json) ? json['activity'] : undefined;
  const intent = isRecord(activity) ? activity['intent'] : undefined;
  if (!isRecord(intent)) throw malformed('activity.intent is missing');
  return intent;
}

function intentRecord(
  intent: Readonly<Record<string, unknown>>,
  key: string,
): Readonly<Record<string, unknown>> {
  const v = intent[key];
  if (!isRecord(v)) throw malformed(`activity.intent.${key} is missing`);
  return v;
}

function str(obj: Readonly<Record<string, unknown>>, key: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw malformed(`intent.${key} is not a string`);
  return v;
}

function known(value: string, list: readonly string[], key: string): string {
  if (!list.includes(value) || value.endsWith('_UNSPECIFIED'))
    throw malformed(`intent.${key} ${JSON.stringify(value)} is not known`);
  return value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function malformed(what: string): CountersignError {
  return new CountersignError('UPSTREAM_ERROR', `public API activity is malformed: ${what}`);
}
