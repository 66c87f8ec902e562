import { CountersignError, type ErrorCode } from '../../src/shared/errors.js';

/** The code every Solana byte parser throws (Turnkey: INVALID_TRANSACTION). */
export const MALFORMED_CODE: ErrorCode = 'SOLANA_MALFORMED_TRANSACTION';

/** Builds the error every Solana byte parser throws (the message prefix is a stable contract). */
export function malformed(field: string, reason: string): CountersignError {
  return new CountersignError(MALFORMED_CODE, `failed to pre-parse Solana transaction: ${field}: ${reason}`, {
    meta: { transactionField: field },
  });
}
