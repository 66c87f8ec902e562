/** Steps every chain's SignTransaction flow shares. */
import { CountersignError, invalid, isCountersignError } from '../../shared/errors.js';
import type { Activity } from '../../client/client.js';
import { openState } from '../activity-result.js';
import type { CallContext } from '../context.js';
import { SIGNING_MODES, type SigningMode, type SignTransactionResponse } from '../proto.js';

export type ResolvedMode = Exclude<SigningMode, 'SIGNING_MODE_AUTO'>;

/** Runs a step on the upstream's answer; any failure in it is a verification failure. */
export function verifying<T>(step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (isCountersignError(e) && e.code === 'SIGNATURE_VERIFICATION_FAILED') throw e;
    throw new CountersignError(
      'SIGNATURE_VERIFICATION_FAILED',
      `the signed transaction failed verification: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

export function resolveMode(mode: string): ResolvedMode {
  if (!(SIGNING_MODES as readonly string[]).includes(mode))
    throw invalid('mode', `unknown signing mode ${mode}`);
  const m = mode as SigningMode;
  switch (m) {
    case 'SIGNING_MODE_AUTO':
    // Every transaction type the daemon accepts is one the public API's sign_transaction takes.
    case 'SIGNING_MODE_SIGN_TRANSACTION':
      return 'SIGNING_MODE_SIGN_TRANSACTION';
    case 'SIGNING_MODE_SIGN_RAW_PAYLOADS':
      return 'SIGNING_MODE_SIGN_RAW_PAYLOADS';
    default: {
      const never: never = m;
      throw invalid('mode', `unknown signing mode ${String(never)}`);
    }
  }
}

/** The response for an activity that has not signed yet (consensus or processing), else undefined. */
export function awaitingResponse(
  activity: Activity,
  mode: Exclude<SigningMode, 'SIGNING_MODE_AUTO'>,
  log: CallContext['log'],
  logFields: Readonly<Record<string, unknown>>,
): SignTransactionResponse | undefined {
  const open = openState(activity);
  if (open === undefined) return undefined;
  log.info({ ...logFields, activityId: activity.id, state: open.state }, 'transaction awaits the activity');
  return {
    signedTransaction: new Uint8Array(0),
    transactionHash: '',
    signatures: [],
    signer: '',
    activityId: activity.id,
    state: open.state,
    fingerprint: activity.fingerprint,
    mode,
  };
}
