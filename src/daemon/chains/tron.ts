/** `Signer.SignTransaction` for Tron. */
import { CountersignError } from '../../shared/errors.js';
import type { CallContext, DaemonContext } from '../context.js';
import type { SignTransactionRequest, SignTransactionResponse } from '../proto.js';

/** Handles one SignTransaction call whose transaction is `tron`. */
export async function signTronTransaction(
  _ctx: DaemonContext,
  _call: CallContext,
  _req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  throw new CountersignError('TRANSACTION_TYPE_UNSUPPORTED', 'tron: not supported by this daemon yet', {
    field: 'tron',
  });
}
