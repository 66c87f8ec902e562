/**
 * One place where a handler's failure becomes a gRPC status: a CountersignError keeps its code's
 * status (errors.ts table) and message, with the code in the `countersign-error-code` trailer;
 * anything else is INTERNAL with an id that is logged, and no detail leaves the process.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { isCountersignError } from '../shared/errors.js';

export const ERROR_CODE_TRAILER = 'countersign-error-code';
export const ERROR_FIELD_TRAILER = 'countersign-error-field';
/** On a policy deny: the decision (`OUTCOME_DENY_EXPLICIT`, …) and each policy's outcome as JSON. */
export const POLICY_OUTCOME_TRAILER = 'countersign-policy-outcome';
export const POLICY_EVALUATIONS_TRAILER = 'countersign-policy-evaluations-bin';

/** The status object grpc-js sends for `err`, logged on the call's logger. */
export function toServiceError(err: unknown, log: Logger): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  if (isCountersignError(err)) {
    metadata.set(ERROR_CODE_TRAILER, err.code);
    if (err.field !== undefined) metadata.set(ERROR_FIELD_TRAILER, err.field);
    if (typeof err.meta?.outcome === 'string') {
      metadata.set(POLICY_OUTCOME_TRAILER, err.meta.outcome);
      metadata.set(POLICY_EVALUATIONS_TRAILER, Buffer.from(JSON.stringify(err.meta.policyEvaluations ?? [])));
    }
    const level = err.grpcStatus === grpc.status.INTERNAL ? 'error' : 'warn';
    log[level]({ errorCode: err.code, field: err.field }, 'call failed');
    return { code: err.grpcStatus as grpc.status, details: err.message, metadata };
  }
  const errorId = randomUUID();
  log.error({ err, errorId }, 'call failed with an unexpected error');
  metadata.set(ERROR_CODE_TRAILER, 'INTERNAL');
  return { code: grpc.status.INTERNAL, details: `internal error (${errorId})`, metadata };
}
