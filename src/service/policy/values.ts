/** The run-time values of the policy language and the error an evaluation fails with. */
import type { Position } from './ast.js';

/** A point in time, in nanoseconds since the Unix epoch. */
export class Timestamp {
  constructor(readonly nanos: bigint) {}
}

/** A struct or map: the facts' own objects, read field by field. */
export type Struct = { readonly [field: string]: unknown };

/**
 * bool, int (one arbitrary-precision bigint type serves the language's i128 and u256), string,
 * list, struct and timestamp. Lists and structs hold raw facts, converted when read.
 */
export type Value = boolean | bigint | string | Timestamp | readonly unknown[] | Struct;

export const EVALUATION_ERROR_KINDS = [
  /** A field, key or top-level keyword that is not there (`wallet.id` when signing with a private key). */
  'MissingField',
  /** An operator or method applied to a type it does not take. */
  'TypeMismatch',
  /** A list or string index outside it, or a negative slice bound. */
  'IndexOutOfRange',
  /** A fact the language has no type for (a float, bytes, a function). */
  'InvalidFact',
] as const;
export type EvaluationErrorKind = (typeof EVALUATION_ERROR_KINDS)[number];

/**
 * Why an expression could not be evaluated. It never leaves the policy engine as a thrown error:
 * `evaluatePolicies` turns it into the policy's OUTCOME_ERROR, keeping the message for the record.
 */
export class PolicyEvaluationError extends Error {
  override readonly name = 'PolicyEvaluationError';

  constructor(
    readonly kind: EvaluationErrorKind,
    readonly pos: Position,
    detail: string,
  ) {
    super(`${kind} at line ${pos.line} column ${pos.column}: ${detail}`);
  }
}

export function isStruct(v: unknown): v is Struct {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Timestamp) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The language's name for a value's type, for error messages. */
export function typeName(v: Value): string {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'string') return 'string';
  if (v instanceof Timestamp) return 'timestamp';
  if (Array.isArray(v)) return 'list';
  return 'struct';
}

/**
 * A raw fact as a value: JS integers count as ints (the adapters give some small numbers as
 * `number`); undefined and null are missing; anything without a language type is InvalidFact.
 */
export function toValue(raw: unknown, pos: Position, what: () => string): Value {
  switch (typeof raw) {
    case 'boolean':
    case 'bigint':
    case 'string':
      return raw;
    case 'number':
      if (Number.isSafeInteger(raw)) return BigInt(raw);
      throw new PolicyEvaluationError('InvalidFact', pos, `${what()} is the number ${raw}, not an integer`);
    case 'undefined':
      throw new PolicyEvaluationError('MissingField', pos, `${what()} is not present`);
    case 'object':
      if (raw === null) throw new PolicyEvaluationError('MissingField', pos, `${what()} is not present`);
      if (raw instanceof Timestamp || Array.isArray(raw) || isStruct(raw)) return raw as Value;
      throw new PolicyEvaluationError('InvalidFact', pos, `${what()} has no policy-language type`);
    default:
      throw new PolicyEvaluationError('InvalidFact', pos, `${what()} has no policy-language type`);
  }
}
