/**
 * The one error type of countersign. A code says *why* something failed, never where; codes are
 * never renamed or reused. `ERROR_TABLE` maps each code to its gRPC status (daemon) and to the
 * Turnkey-style `{code, message, details}` body with its HTTP status (public API).
 */

/** gRPC status numbers (google.rpc.Code). */
export const GrpcStatus = {
  OK: 0,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** grpc-gateway's mapping from a gRPC status to an HTTP status. */
export function httpStatusOf(grpc: GrpcStatusCode): number {
  switch (grpc) {
    case 0:
      return 200;
    case 3:
    case 9:
      return 400;
    case 16:
      return 401;
    case 7:
      return 403;
    case 5:
      return 404;
    case 6:
      return 409;
    case 8:
      return 429;
    case 12:
      return 501;
    case 14:
      return 503;
    case 4:
      return 504;
    case 2:
    case 13:
    case 15:
      return 500;
  }
}

interface ErrorSpec {
  /** gRPC status used by the daemon and carried as `code` in the public API body. */
  readonly grpc: GrpcStatusCode;
  /** Turnkey's documented `turnkeyErrorCode` closest to ours, sent in the body's details. */
  readonly turnkey: string;
}

export const ERROR_TABLE = {
  // request shape
  REQUEST_MALFORMED: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  FIELD_MISSING: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  FIELD_INVALID: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  NAME_NOT_UNIQUE: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  ACTIVITY_TYPE_UNSUPPORTED: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  ROUTE_NOT_FOUND: { grpc: 5, turnkey: 'REQUEST_INVALID' },
  // a path of Turnkey's API that countersign does not serve
  ROUTE_UNIMPLEMENTED: { grpc: 12, turnkey: 'REQUEST_INVALID' },
  BODY_TOO_LARGE: { grpc: 8, turnkey: 'REQUEST_INVALID' },
  RESOURCE_LIMIT_EXCEEDED: { grpc: 8, turnkey: 'REQUEST_INVALID' },
  // an array in the request is longer than one request may carry (split the request)
  FIELD_TOO_LONG: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  // authentication
  STAMP_MISSING: { grpc: 16, turnkey: 'SIGNATURE_MISSING' },
  STAMP_MALFORMED: { grpc: 16, turnkey: 'UNAUTHENTICATED' },
  STAMP_INVALID_SIGNATURE: { grpc: 16, turnkey: 'SIGNATURE_INVALID' },
  STAMP_UNKNOWN_KEY: { grpc: 16, turnkey: 'PUBLIC_KEY_NOT_FOUND' },
  API_KEY_EXPIRED: { grpc: 16, turnkey: 'API_KEY_EXPIRED' },
  TIMESTAMP_STALE: { grpc: 3, turnkey: 'INVALID_TIME' },
  TIMESTAMP_IN_FUTURE: { grpc: 3, turnkey: 'INVALID_TIME' },
  // organizations and resources
  ORGANIZATION_ID_MALFORMED: { grpc: 3, turnkey: 'INVALID_ORGANIZATION_ID' },
  ORGANIZATION_NOT_FOUND: { grpc: 5, turnkey: 'ORGANIZATION_NOT_FOUND' },
  ORGANIZATION_MISMATCH: { grpc: 3, turnkey: 'ORGANIZATION_MISMATCH' },
  REQUEST_NOT_AUTHORIZED: { grpc: 7, turnkey: 'REQUEST_NOT_AUTHORIZED' },
  RESOURCE_NOT_FOUND: { grpc: 5, turnkey: 'REQUEST_INVALID' },
  SIGN_WITH_NOT_FOUND: { grpc: 5, turnkey: 'REQUEST_INVALID' },
  WALLET_NOT_EXPORTED: { grpc: 3, turnkey: 'WALLET_ACCOUNT_NOT_EXPORTED' },
  // signing input
  PAYLOAD_INVALID: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  HASH_FUNCTION_INVALID: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  CURVE_UNSUPPORTED: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  EIP712_INVALID: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  TRANSACTION_TYPE_UNSUPPORTED: { grpc: 3, turnkey: 'UNSUPPORTED_TRANSACTION_TYPE' },
  ETHEREUM_MALFORMED_TRANSACTION: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  ETHEREUM_UNSUPPORTED_TRANSACTION_TYPE: { grpc: 3, turnkey: 'UNSUPPORTED_TRANSACTION_TYPE' },
  ETHEREUM_SIGNED_TRANSACTION: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  SOLANA_MALFORMED_TRANSACTION: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  SOLANA_SIGNER_NOT_REQUIRED: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  TRON_MALFORMED_TRANSACTION: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  TRON_TXID_MISMATCH: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  TRON_UNSUPPORTED_CONTRACT_TYPE: { grpc: 3, turnkey: 'UNSUPPORTED_TRANSACTION_TYPE' },
  BITCOIN_MALFORMED_PSBT: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  BITCOIN_SIGHASH_UNSUPPORTED: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  BITCOIN_NO_INPUT_FOR_SIGNER: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  BITCOIN_MISSING_UTXO: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  BITCOIN_INPUT_ALREADY_SIGNED: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  BITCOIN_CANNOT_FINALIZE: { grpc: 9, turnkey: 'INVALID_TRANSACTION' },
  TEMPO_MALFORMED_TRANSACTION: { grpc: 3, turnkey: 'INVALID_TRANSACTION' },
  TEMPO_UNSUPPORTED_FEATURE: { grpc: 3, turnkey: 'UNSUPPORTED_TRANSACTION_TYPE' },
  // the gas station cannot serve this chain (no CREATE2 deployer, executor not deployable, sponsor unfunded)
  GAS_STATION_UNAVAILABLE: { grpc: 9, turnkey: 'REQUEST_INVALID' },
  // policy
  POLICY_DENIED: { grpc: 7, turnkey: 'REQUEST_NOT_AUTHORIZED' },
  // daemon
  SIGNATURE_VERIFICATION_FAILED: { grpc: 13, turnkey: 'INTERNAL' },
  IDEMPOTENCY_KEY_CONFLICT: { grpc: 9, turnkey: 'REQUEST_INVALID' },
  UPSTREAM_UNAVAILABLE: { grpc: 14, turnkey: 'INTERNAL' },
  UPSTREAM_ERROR: { grpc: 13, turnkey: 'INTERNAL' },
  // a remote public API refused the request; the gRPC status follows the remote's code
  UPSTREAM_INVALID_ARGUMENT: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  UPSTREAM_NOT_FOUND: { grpc: 5, turnkey: 'REQUEST_INVALID' },
  UPSTREAM_PERMISSION_DENIED: { grpc: 7, turnkey: 'REQUEST_NOT_AUTHORIZED' },
  UPSTREAM_UNAUTHENTICATED: { grpc: 16, turnkey: 'UNAUTHENTICATED' },
  ACTIVITY_NOT_COMPLETED: { grpc: 9, turnkey: 'REQUEST_INVALID' },
  DAEMON_SHUTTING_DOWN: { grpc: 14, turnkey: 'INTERNAL' },
  CONFIG_INVALID: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  // gRPC callers (--grpc-clients): not known, or known but not allowed this call
  CALLER_UNKNOWN: { grpc: 16, turnkey: 'UNAUTHENTICATED' },
  CALLER_NOT_ALLOWED: { grpc: 7, turnkey: 'REQUEST_NOT_AUTHORIZED' },
  // a watch stream outlived its cap; the caller opens a new one
  WATCH_LIFETIME_EXCEEDED: { grpc: 4, turnkey: 'REQUEST_INVALID' },
  // outbound calls (webhooks, OIDC, OAuth): a URL the guard refuses, or a peer that did not answer
  OUTBOUND_URL_REFUSED: { grpc: 3, turnkey: 'REQUEST_INVALID' },
  OUTBOUND_REQUEST_FAILED: { grpc: 14, turnkey: 'INTERNAL' },
  // the service thread is down or restarting; a retry with the same body is safe
  SERVICE_UNAVAILABLE: { grpc: 14, turnkey: 'INTERNAL' },
  // service
  KEY_MATERIAL_UNAVAILABLE: { grpc: 13, turnkey: 'INTERNAL' },
  INTERNAL: { grpc: 13, turnkey: 'INTERNAL' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_TABLE;
export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

export interface ErrorOptions {
  /** The request field that was wrong, as a dotted path (`parameters.signWith`). */
  readonly field?: string | undefined;
  readonly cause?: unknown;
  /** Extra structured facts safe to send to the caller (never key material, stamps or payloads). */
  readonly meta?: Readonly<Record<string, unknown>> | undefined;
}

/** The base error: a stable code, a short message naming the field, and a cause kept off the wire. */
export class CountersignError extends Error {
  override readonly name = 'CountersignError';
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly meta: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options.field;
    this.meta = options.meta;
  }

  get grpcStatus(): GrpcStatusCode {
    return ERROR_TABLE[this.code].grpc;
  }

  get httpStatus(): number {
    return httpStatusOf(ERROR_TABLE[this.code].grpc);
  }
}

/** Shorthand for a field error: `invalid('parameters.signWith', 'must be ...')`. */
export function invalid(field: string, reason: string, code: ErrorCode = 'FIELD_INVALID'): CountersignError {
  return new CountersignError(code, `${field}: ${reason}`, { field });
}

export function missing(field: string): CountersignError {
  return new CountersignError('FIELD_MISSING', `${field}: is required`, { field });
}

export function isCountersignError(e: unknown): e is CountersignError {
  return e instanceof CountersignError;
}

/** Wire body of an error in the public API (grpc-gateway `rpcStatus`). */
export interface RpcStatusBody {
  code: number;
  message: string;
  details: Record<string, unknown>[];
}

/** Builds the public API error body: declared fields only, `cause` never leaves the process. */
export function toRpcStatus(err: CountersignError): RpcStatusBody {
  const details: Record<string, unknown>[] = [
    {
      '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail',
      turnkeyErrorCode: ERROR_TABLE[err.code].turnkey,
      countersignErrorCode: err.code,
    },
  ];
  if (err.field !== undefined) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: err.field, description: err.message }],
    });
  }
  return { code: err.grpcStatus, message: err.message, details };
}
