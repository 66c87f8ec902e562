/**
 * Reading a submitted activity: where it stands (a state the caller sees, or an error) and its
 * signing results, validated into bytes. Anything the public API sends that does not fit is an
 * UPSTREAM_ERROR, never a crash and never a result.
 */
import { upstreamError, type Activity } from '../client/client.js';
import { hexToBytes } from '../shared/encoding.js';
import { CountersignError } from '../shared/errors.js';
import type { ActivityState } from './proto.js';

/** An activity that has not produced a signature yet, as the caller is told. */
export interface OpenActivity {
  readonly state: Extract<ActivityState, 'ACTIVITY_STATE_CONSENSUS_NEEDED' | 'ACTIVITY_STATE_PENDING'>;
}

/**
 * `undefined` for a completed activity, the open state for one awaiting approval or processing;
 * throws for one that ended without a result.
 */
export function openState(activity: Activity): OpenActivity | undefined {
  switch (activity.status) {
    case 'ACTIVITY_STATUS_COMPLETED':
      return undefined;
    case 'ACTIVITY_STATUS_CONSENSUS_NEEDED':
      return { state: 'ACTIVITY_STATE_CONSENSUS_NEEDED' };
    case 'ACTIVITY_STATUS_CREATED':
    case 'ACTIVITY_STATUS_PENDING':
      return { state: 'ACTIVITY_STATE_PENDING' };
    case 'ACTIVITY_STATUS_FAILED': {
      if (activity.failure === undefined) {
        return fail(
          new CountersignError('UPSTREAM_ERROR', `activity ${activity.id} failed without a reason`),
        );
      }
      return fail(upstreamError(200, activity.failure));
    }
    case 'ACTIVITY_STATUS_REJECTED':
      return fail(
        new CountersignError(
          'UPSTREAM_PERMISSION_DENIED',
          activity.failure?.message || `activity ${activity.id} was rejected by a vote`,
          { meta: { activityId: activity.id } },
        ),
      );
    case 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED':
      return fail(
        new CountersignError(
          'ACTIVITY_NOT_COMPLETED',
          `activity ${activity.id} needs an MFA approval, which the daemon cannot give`,
          { meta: { activityId: activity.id } },
        ),
      );
    default: {
      const never: never = activity.status;
      return fail(new CountersignError('UPSTREAM_ERROR', `unknown activity status ${String(never)}`));
    }
  }
}

function fail(err: CountersignError): never {
  throw err;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function malformed(what: string): CountersignError {
  return new CountersignError('UPSTREAM_ERROR', `public API result is malformed: ${what}`);
}

/** The signed transaction bytes of a completed sign_transaction activity. */
export function signedTransactionOf(activity: Activity): Uint8Array {
  const r = activity.result['signTransactionResult'];
  if (!isRecord(r) || typeof r['signedTransaction'] !== 'string') {
    throw malformed('signTransactionResult.signedTransaction is missing');
  }
  try {
    return hexToBytes(r['signedTransaction'], 'signTransactionResult.signedTransaction');
  } catch (cause) {
    throw new CountersignError(
      'UPSTREAM_ERROR',
      'public API result is malformed: signedTransaction is not hex',
      {
        cause,
      },
    );
  }
}

/** One ECDSA signature as returned: r, s as 32 bytes, v the y-parity. */
export interface ResultSignature {
  readonly r: Uint8Array;
  readonly s: Uint8Array;
  readonly v: 0 | 1;
}

const COMPONENT_RE = /^(0x)?[0-9a-fA-F]{1,64}$/;

function component(value: unknown, path: string): Uint8Array {
  if (typeof value !== 'string' || !COMPONENT_RE.test(value))
    throw malformed(`${path} is not a 32-byte hex value`);
  const h = value.replace(/^0x/, '');
  // Some servers trim leading zero bytes (reference 6.1); a value is read as a 32-byte integer.
  return Uint8Array.from(Buffer.from(h.padStart(64, '0'), 'hex'));
}

function parity(value: unknown, path: string): 0 | 1 {
  if (typeof value !== 'string' || !/^(0x)?[0-9a-fA-F]{1,2}$/.test(value))
    throw malformed(`${path} is not hex`);
  const n = Number.parseInt(value.replace(/^0x/, ''), 16);
  // "00"/"01" as documented; 27/28 (0x1b/0x1c) from signers that add the legacy offset.
  if (n === 0 || n === 27) return 0;
  if (n === 1 || n === 28) return 1;
  throw malformed(`${path} is not a y-parity`);
}

/** The signatures of a completed sign_raw_payloads activity; exactly `count` of them. */
export function rawSignaturesOf(activity: Activity, count: number): ResultSignature[] {
  const r = activity.result['signRawPayloadsResult'];
  if (!isRecord(r) || !Array.isArray(r['signatures']))
    throw malformed('signRawPayloadsResult.signatures is missing');
  const list = r['signatures'] as unknown[];
  if (list.length !== count) throw malformed(`expected ${count} signatures, got ${list.length}`);
  return list.map((sig, i) => {
    const path = `signRawPayloadsResult.signatures[${i}]`;
    if (!isRecord(sig)) throw malformed(`${path} is not an object`);
    return {
      r: component(sig['r'], `${path}.r`),
      s: component(sig['s'], `${path}.s`),
      v: parity(sig['v'], `${path}.v`),
    };
  });
}

/** The result keys of eth_send_transaction, by activity type (turnkey-api.md 6.4). */
const SEND_RESULT_KEYS: Readonly<Record<string, string>> = {
  ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2: 'ethSendTransactionResultV2',
  ACTIVITY_TYPE_ETH_SEND_TRANSACTION: 'ethSendTransactionResult',
};

/** The `sendTransactionStatusId` of a completed eth_send_transaction activity. */
export function sendTransactionStatusIdOf(activity: Activity): string {
  const key = SEND_RESULT_KEYS[activity.type];
  if (key === undefined) throw malformed(`activity type ${activity.type} is not an eth_send_transaction`);
  const r = activity.result[key];
  const id = isRecord(r) ? r['sendTransactionStatusId'] : undefined;
  if (typeof id !== 'string' || id === '') throw malformed(`${key}.sendTransactionStatusId is missing`);
  return id;
}
