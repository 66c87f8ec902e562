/**
 * `Signer.SignTransaction`: dispatches on the request's `transaction` oneof to the chain's flow.
 * Each flow builds or strictly parses the unsigned transaction, has it signed through the public
 * API, and returns nothing its chain adapter did not verify against the unsigned bytes and signer.
 */
import { CountersignError, invalid } from '../shared/errors.js';
import type { CallContext, DaemonContext } from './context.js';
import type { SignTransactionRequest, SignTransactionResponse } from './proto.js';
import { signBitcoinTransaction } from './chains/bitcoin.js';
import { signEthereumTransaction } from './chains/ethereum.js';
import { signSolanaTransaction } from './chains/solana.js';
import { signTempoTransaction } from './chains/tempo.js';
import { signTronTransaction } from './chains/tron.js';

export async function signTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  if (req.feePayerSignWith !== '' && req.transaction !== 'tempo')
    throw invalid('fee_payer_sign_with', 'only Tempo sponsored transactions take a fee payer');
  switch (req.transaction) {
    case 'ethereum':
      return signEthereumTransaction(ctx, call, req);
    case 'solana':
      return signSolanaTransaction(ctx, call, req);
    case 'tron':
      return signTronTransaction(ctx, call, req);
    case 'bitcoin':
      return signBitcoinTransaction(ctx, call, req);
    case 'tempo':
      return signTempoTransaction(ctx, call, req);
    default:
      throw new CountersignError(
        'FIELD_MISSING',
        'transaction: one of ethereum, solana, tron, bitcoin, tempo is required',
        {
          field: 'transaction',
        },
      );
  }
}
