/**
 * `Signer.SendEthTransaction`: checks at the edge what the daemon can (addresses, decimals, the
 * number of calls, the CAIP-2 namespace), submits eth_send_transaction V2 with every unset field
 * left out, and answers with the send's status id, or with the activity's open state when a
 * policy asks for consensus. The service fills, signs under policy, broadcasts and tracks the
 * transaction; a field it refuses is named in this request's terms (`parameters.gasLimit` →
 * `gas_limit`).
 */
import { parseAddress } from '../../chains/ethereum/index.js';
import { MAX_TX_NONCE } from '../../chains/ethereum/types.js';
import type { Activity } from '../client/client.js';
import { bytesTo0x, parseDecimal, UINT64_MAX, UINT256_MAX } from '../shared/encoding.js';
import { CountersignError, invalid, isCountersignError, missing } from '../shared/errors.js';
import { openState, sendTransactionStatusIdOf } from './activity-result.js';
import { organizationOf, type CallContext, type DaemonContext } from './context.js';
import type { EthCallMessage, SendEthTransactionRequest, SendEthTransactionResponse } from './proto.js';
import { submitActivity } from './submit-activity.js';

/** eth_send_transaction V2 takes 1 to 50 calls (turnkey-api.md 6.4). */
const MAX_CALLS = 50;
/** CAIP-2 for EVM chains: `eip155:<EIP-155 chain id>`. */
const EIP155_RE = /^eip155:[1-9][0-9]{0,19}$/;

/** Handles one SendEthTransaction call. */
export async function sendEthTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SendEthTransactionRequest,
): Promise<SendEthTransactionResponse> {
  const organizationId = organizationOf(ctx, req.organizationId);
  const parameters = ethSendTransactionIntent(req);
  const log = call.log.child({ caip2: req.caip2, calls: req.calls.length, sponsor: req.sponsor });
  let activity: Activity;
  let open: ReturnType<typeof openState>;
  try {
    activity = await submitActivity(
      ctx,
      { log },
      {
        method: 'SendEthTransaction',
        organizationId,
        idempotencyKey: req.idempotencyKey,
        request: { organizationId, ...parameters },
        activityName: 'eth_send_transaction',
        activityType: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
        parameters,
      },
    );
    open = openState(activity);
  } catch (e) {
    throw inRequestTerms(e);
  }
  const base = { activityId: activity.id, fingerprint: activity.fingerprint };
  if (open !== undefined) {
    log.info({ activityId: activity.id, state: open.state }, 'send awaits the activity');
    return { ...base, state: open.state, sendTransactionStatusId: '' };
  }
  const sendTransactionStatusId = sendTransactionStatusIdOf(activity);
  log.info({ activityId: activity.id, sendTransactionStatusId }, 'send recorded');
  return { ...base, state: 'ACTIVITY_STATE_COMPLETED', sendTransactionStatusId };
}

/**
 * `ethSendTransactionIntentV2` of a request, validated; fields the caller left empty are omitted
 * so the service chooses them. Equal requests give equal objects (the idempotency hash).
 */
export function ethSendTransactionIntent(req: SendEthTransactionRequest): Record<string, unknown> {
  if (req.from === '') throw missing('from');
  parseAddress(req.from, 'from');
  if (req.caip2 === '') throw missing('caip2');
  if (!EIP155_RE.test(req.caip2)) throw invalid('caip2', 'must be eip155:<chain id> (an EVM chain)');
  if (req.calls.length === 0) throw missing('calls');
  if (req.calls.length > MAX_CALLS)
    throw invalid('calls', `holds ${req.calls.length} calls; at most ${MAX_CALLS}`);
  const calls = req.calls.map((c, i) => callOf(c, `calls[${i}]`));
  const maxFeePerGas = decimal(req.maxFeePerGas, 'max_fee_per_gas', UINT256_MAX);
  const maxPriorityFeePerGas = decimal(req.maxPriorityFeePerGas, 'max_priority_fee_per_gas', UINT256_MAX);
  if (maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined && maxPriorityFeePerGas > maxFeePerGas)
    throw invalid('max_priority_fee_per_gas', 'must not exceed max_fee_per_gas (EIP-1559)');
  return {
    from: req.from,
    caip2: req.caip2,
    calls,
    ...(req.sponsor ? { sponsor: true } : {}),
    ...given('nonce', req.nonce, decimal(req.nonce, 'nonce', MAX_TX_NONCE)),
    ...given('gasLimit', req.gasLimit, decimal(req.gasLimit, 'gas_limit', UINT64_MAX)),
    ...given('maxFeePerGas', req.maxFeePerGas, maxFeePerGas),
    ...given('maxPriorityFeePerGas', req.maxPriorityFeePerGas, maxPriorityFeePerGas),
    ...given('deadline', req.deadline, decimal(req.deadline, 'deadline', UINT64_MAX)),
    ...given(
      'gasStationNonce',
      req.gasStationNonce,
      decimal(req.gasStationNonce, 'gas_station_nonce', UINT256_MAX),
    ),
  };
}

function callOf(c: EthCallMessage, field: string): Record<string, string> {
  if (c.to === '') throw missing(`${field}.to`);
  parseAddress(c.to, `${field}.to`);
  decimal(c.value, `${field}.value`, UINT256_MAX);
  return {
    to: c.to,
    ...(c.value === '' ? {} : { value: c.value }),
    ...(c.data.length === 0 ? {} : { data: bytesTo0x(new Uint8Array(c.data)) }),
  };
}

/** A decimal field: undefined when empty, else its value (canonical digits only). */
function decimal(value: string, field: string, max: bigint): bigint | undefined {
  return value === '' ? undefined : parseDecimal(value, field, max);
}

/** `{key: text}` when the field was given (the text as sent, already checked canonical). */
function given(key: string, text: string, parsed: bigint | undefined): Record<string, string> {
  return parsed === undefined ? {} : { [key]: text };
}

const SERVICE_FIELD_RE = /^(parameters(?:\.[A-Za-z0-9_]+)+): /;

/**
 * The service names a refused field by its path in the intent (`parameters.calls.0.to`); the
 * caller knows this request's fields (`calls[0].to`). The service's message is kept as it is.
 */
function inRequestTerms(e: unknown): unknown {
  if (!isCountersignError(e)) return e;
  const path = e.field ?? SERVICE_FIELD_RE.exec(e.message)?.[1];
  const field = path === undefined ? undefined : requestFieldOf(path);
  if (field === undefined || field === e.field) return e;
  return new CountersignError(e.code, e.message, { field, cause: e, meta: e.meta });
}

/** `parameters.calls.0.to` → `calls[0].to`, `parameters.gasLimit` → `gas_limit`. */
export function requestFieldOf(servicePath: string): string | undefined {
  const [root, ...parts] = servicePath.split('.');
  if (root !== 'parameters' || parts.length === 0) return undefined;
  let out = '';
  for (const p of parts) {
    if (/^[0-9]+$/.test(p)) out += `[${p}]`;
    else out += (out === '' ? '' : '.') + p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  }
  return out;
}
