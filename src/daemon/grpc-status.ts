/**
 * One place where a handler's failure becomes a gRPC status: a CountersignError keeps its code's
 * status (errors.ts table) and message, with the code in the `countersign-error-code` trailer;
 * anything else is INTERNAL with an id that is logged, and no detail leaves the process. Every
 * error also carries the gRPC richer error model: a google.rpc.Status in `grpc-status-details-bin`
 * whose one detail is a google.rpc.ErrorInfo (reason = the code, domain `countersign`, the field
 * in metadata), which generated clients of any language read.
 */
import { randomUUID } from 'node:crypto';
import { create, toBinary } from '@bufbuild/protobuf';
import { anyPack } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { isCountersignError } from '../shared/errors.js';
import { ErrorInfoSchema } from '../shared/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../shared/gen/google/rpc/status_pb.js';

export const ERROR_CODE_TRAILER = 'countersign-error-code';
export const ERROR_FIELD_TRAILER = 'countersign-error-field';
/** On a policy deny: the decision (`OUTCOME_DENY_EXPLICIT`, …) and each policy's outcome as JSON. */
export const POLICY_OUTCOME_TRAILER = 'countersign-policy-outcome';
export const POLICY_EVALUATIONS_TRAILER = 'countersign-policy-evaluations-bin';
/** The gRPC richer error model's trailer: a serialized google.rpc.Status. */
export const STATUS_DETAILS_TRAILER = 'grpc-status-details-bin';
/** ErrorInfo.domain of countersign's errors. */
export const ERROR_DOMAIN = 'countersign';

/** google.rpc.Status { code, message, details: [ErrorInfo { reason, domain, metadata }] }, serialized. */
export function statusDetails(
  code: number,
  message: string,
  reason: string,
  metadata: Readonly<Record<string, string>>,
): Buffer {
  const info = create(ErrorInfoSchema, { reason, domain: ERROR_DOMAIN, metadata: { ...metadata } });
  const status = create(StatusSchema, { code, message, details: [anyPack(ErrorInfoSchema, info)] });
  return Buffer.from(toBinary(StatusSchema, status));
}

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
    metadata.set(
      STATUS_DETAILS_TRAILER,
      statusDetails(
        err.grpcStatus,
        err.message,
        err.code,
        err.field === undefined ? {} : { field: err.field },
      ),
    );
    const level = err.grpcStatus === grpc.status.INTERNAL ? 'error' : 'warn';
    log[level]({ errorCode: err.code, field: err.field }, 'call failed');
    return { code: err.grpcStatus as grpc.status, details: err.message, metadata };
  }
  const errorId = randomUUID();
  log.error({ err, errorId }, 'call failed with an unexpected error');
  const details = `internal error (${errorId})`;
  metadata.set(ERROR_CODE_TRAILER, 'INTERNAL');
  metadata.set(STATUS_DETAILS_TRAILER, statusDetails(grpc.status.INTERNAL, details, 'INTERNAL', { errorId }));
  return { code: grpc.status.INTERNAL, details, metadata };
}
