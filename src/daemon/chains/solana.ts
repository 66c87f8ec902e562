/** `Signer.SignTransaction` for Solana. */
import { CountersignError } from '../../shared/errors.js';
import type { CallContext, DaemonContext } from '../context.js';
import type { SignTransactionRequest, SignTransactionResponse } from '../proto.js';

/** Handles one SignTransaction call whose transaction is `solana`. */
export async function signSolanaTransaction(
  _ctx: DaemonContext,
  _call: CallContext,
  _req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  throw new CountersignError('TRANSACTION_TYPE_UNSUPPORTED', 'solana: not supported by this daemon yet', {
    field: 'solana',
  });
}
