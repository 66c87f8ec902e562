/**
 * Enum value lists the public API and the gRPC contract share, declared once: the service validates
 * requests against them, the daemon's proto types add the proto3 `*_UNSPECIFIED` zero value in front.
 */

export const PAYLOAD_ENCODINGS = [
  'PAYLOAD_ENCODING_HEXADECIMAL',
  'PAYLOAD_ENCODING_TEXT_UTF8',
  'PAYLOAD_ENCODING_EIP712',
  'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
] as const;
export type PayloadEncoding = (typeof PAYLOAD_ENCODINGS)[number];

export const HASH_FUNCTIONS = [
  'HASH_FUNCTION_NO_OP',
  'HASH_FUNCTION_SHA256',
  'HASH_FUNCTION_KECCAK256',
  'HASH_FUNCTION_NOT_APPLICABLE',
] as const;
export type HashFunction = (typeof HASH_FUNCTIONS)[number];

/** One policy's outcome (Turnkey's `v1Outcome` values that the engine produces). */
export const POLICY_OUTCOMES = [
  /** An ALLOW policy whose condition held and whose consensus is satisfied. */
  'OUTCOME_ALLOW',
  /** A DENY policy whose condition held and whose consensus is satisfied. */
  'OUTCOME_DENY_EXPLICIT',
  /** The condition was false: the policy does not apply to this request. */
  'OUTCOME_DENY_IMPLICIT',
  /** The condition held but the consensus is not (yet) satisfied by the approvers so far. */
  'OUTCOME_REQUIRES_CONSENSUS',
  /** Some sub-expression failed (missing field, type error, …); the policy neither allows nor denies. */
  'OUTCOME_ERROR',
  /** The `time` expression was false: the policy is skipped. */
  'OUTCOME_TIME_INACTIVE',
] as const;
export type PolicyOutcome = (typeof POLICY_OUTCOMES)[number];

/** The decision for the request as a whole: the first four policy outcomes. */
export const DECISION_OUTCOMES = [
  'OUTCOME_ALLOW',
  'OUTCOME_DENY_EXPLICIT',
  'OUTCOME_DENY_IMPLICIT',
  'OUTCOME_REQUIRES_CONSENSUS',
] as const satisfies readonly PolicyOutcome[];
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];
