/** sign_transaction for TRANSACTION_TYPE_SOLANA. */
import { CountersignError } from '../../../shared/errors.js';
import type { TransactionSigner } from './types.js';

export const signSolanaTransaction: TransactionSigner = () => {
  throw new CountersignError(
    'TRANSACTION_TYPE_UNSUPPORTED',
    'parameters.type: TRANSACTION_TYPE_SOLANA is not supported by this service yet',
    {
      field: 'parameters.type',
    },
  );
};
