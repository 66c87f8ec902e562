/**
 * `Signer.WatchSendTransaction`: polls `query/get_send_transaction_status` and sends the status each
 * time it, its transaction hash or its error changes, the first time at once, until INCLUDED or
 * FAILED. It stops without sending more when the stream's signal aborts (cancel, deadline,
 * shutdown); an unknown id is the service's NOT_FOUND.
 */
import { isUuid } from '../shared/uuid.js';
import { CountersignError, invalid, missing } from '../shared/errors.js';
import { organizationOf, type DaemonContext } from './context.js';
import { pollChanges, pollInterval, type WatchCallContext } from './polling.js';
import type {
  SendTransactionStatus,
  SendTransactionStatusCode,
  WatchSendTransactionRequest,
} from './proto.js';

/** The public API's `txStatus` values (turnkey-api.md 5) and their enum names. */
const STATUS_CODES: Readonly<Record<string, SendTransactionStatusCode>> = {
  INITIALIZED: 'SEND_TRANSACTION_STATUS_CODE_INITIALIZED',
  BROADCASTING: 'SEND_TRANSACTION_STATUS_CODE_BROADCASTING',
  INCLUDED: 'SEND_TRANSACTION_STATUS_CODE_INCLUDED',
  FAILED: 'SEND_TRANSACTION_STATUS_CODE_FAILED',
};

const TX_HASH_RE = /^0x[0-9a-fA-F]{64}$/;

/** Streams status changes through `send` until a terminal status or until the signal aborts. */
export async function watchSendTransaction(
  ctx: DaemonContext,
  call: WatchCallContext,
  req: WatchSendTransactionRequest,
  send: (message: SendTransactionStatus) => void,
): Promise<void> {
  const id = req.sendTransactionStatusId;
  if (id === '') throw missing('send_transaction_status_id');
  if (!isUuid(id)) throw invalid('send_transaction_status_id', 'must be a UUID');
  const organizationId = organizationOf(ctx, req.organizationId);
  await pollChanges<SendTransactionStatus>(call.signal, {
    intervalMs: pollInterval(req.pollIntervalMs),
    read: async () =>
      statusOf(
        id,
        await ctx.client.query<unknown>('get_send_transaction_status', {
          organizationId,
          sendTransactionStatusId: id,
        }),
      ),
    same: (a, b) => a.status === b.status && a.txHash === b.txHash && a.errorMessage === b.errorMessage,
    terminal: (m) =>
      m.status === 'SEND_TRANSACTION_STATUS_CODE_INCLUDED' ||
      m.status === 'SEND_TRANSACTION_STATUS_CODE_FAILED',
    summary: (m) => m.status,
    send,
    log: call.log.child({ sendTransactionStatusId: id }),
  });
}

/** Validates `{txStatus, eth?: {txHash}, error?: {message}}` into the stream's message. */
export function statusOf(id: string, json: unknown): SendTransactionStatus {
  if (!isRecord(json)) throw malformed('not an object');
  const txStatus = json['txStatus'];
  const status =
    typeof txStatus === 'string' && Object.hasOwn(STATUS_CODES, txStatus)
      ? STATUS_CODES[txStatus]
      : undefined;
  if (status === undefined) throw malformed(`txStatus ${JSON.stringify(txStatus)} is not a known status`);
  const eth = json['eth'];
  const txHash = isRecord(eth) ? (eth['txHash'] ?? '') : '';
  if (typeof txHash !== 'string' || (txHash !== '' && !TX_HASH_RE.test(txHash)))
    throw malformed('eth.txHash is not a 32-byte 0x hex hash');
  const error = json['error'];
  const message = isRecord(error) ? (error['message'] ?? '') : '';
  if (typeof message !== 'string') throw malformed('error.message is not a string');
  return { sendTransactionStatusId: id, status, txHash: txHash.toLowerCase(), errorMessage: message };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function malformed(what: string): CountersignError {
  return new CountersignError('UPSTREAM_ERROR', `get_send_transaction_status answer is malformed: ${what}`);
}
