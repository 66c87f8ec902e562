import { CountersignError, type ErrorCode } from '../../src/shared/errors.js';

/**
 * The code every Solana byte parser throws. PAYLOAD_INVALID stands in until the shared table gets
 * SOLANA_MALFORMED_TRANSACTION (turnkey INVALID_TRANSACTION); switching is this one line.
 */
export const MALFORMED_CODE: ErrorCode = 'PAYLOAD_INVALID';

/** Builds the error every Solana byte parser throws (the message prefix is a stable contract). */
export function malformed(field: string, reason: string): CountersignError {
  return new CountersignError(MALFORMED_CODE, `failed to pre-parse Solana transaction: ${field}: ${reason}`, {
    meta: { transactionField: field },
  });
}
