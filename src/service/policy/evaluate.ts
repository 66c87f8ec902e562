import type { Expr, Position } from './ast.js';
import { isWithinCronSpan } from './parseCronSpan.js';
import { printExpression } from './printExpression.js';
import { isStruct, PolicyEvaluationError, Timestamp, toValue, typeName, type Value } from './values.js';

/** What an expression is evaluated against. */
export interface EvaluationEnv {
  /** Top-level keywords (`activity`, `eth`, `approvers`, …) as raw facts; `time` is reserved for the clock. */
  readonly bindings: Readonly<Record<string, unknown>>;
  /** The trusted server time behind `time.now` and `CronSpan`. */
  readonly now: Date;
}

interface Scope {
  readonly name: string;
  readonly value: Value;
  readonly parent: Scope | undefined;
}

// Addresses, hashes and calldata are hex; their case carries no meaning (EIP-55 aside), so two
// 0x-prefixed hex strings compare case-insensitively: `eth.tx.to == '0xAbC…'` matches the
// adapters' lower-case facts. Other strings (base58, bech32, enum names) compare exactly.
const HEX_0X = /^0x[0-9a-fA-F]*$/;

/** 'an int', 'a string', … */
function article(type: string): string {
  return `${type === 'int' ? 'an' : 'a'} ${type}`;
}

function mismatch(pos: Position, detail: string): PolicyEvaluationError {
  return new PolicyEvaluationError('TypeMismatch', pos, detail);
}

function equal(a: Value, b: Value, pos: Position): boolean {
  if (typeof a === 'string' && typeof b === 'string') {
    return HEX_0X.test(a) && HEX_0X.test(b) ? a.toLowerCase() === b.toLowerCase() : a === b;
  }
  if (
    (typeof a === 'bigint' && typeof b === 'bigint') ||
    (typeof a === 'boolean' && typeof b === 'boolean')
  ) {
    return a === b;
  }
  if (a instanceof Timestamp && b instanceof Timestamp) return a.nanos === b.nanos;
  if (Array.isArray(a) && Array.isArray(b)) {
    const la = a as readonly unknown[];
    const lb = b as readonly unknown[];
    // Every pair is compared, so a type error anywhere in either list surfaces.
    let same = la.length === lb.length;
    for (let i = 0; i < Math.min(la.length, lb.length); i++) {
      const ea = toValue(la[i], pos, () => `list element ${i}`);
      const eb = toValue(lb[i], pos, () => `list element ${i}`);
      if (!equal(ea, eb, pos)) same = false;
    }
    return same;
  }
  throw mismatch(pos, `cannot compare ${typeName(a)} with ${typeName(b)}`);
}

function asBool(v: Value, e: Expr, role: string): boolean {
  if (typeof v !== 'boolean')
    throw mismatch(e.pos, `${role} must be a bool, got ${typeName(v)} from ${printExpression(e)}`);
  return v;
}

function asInt(v: Value, e: Expr, role: string): bigint {
  if (typeof v !== 'bigint')
    throw mismatch(e.pos, `${role} must be an int, got ${typeName(v)} from ${printExpression(e)}`);
  return v;
}

function asList(v: Value, e: Expr, role: string): readonly unknown[] {
  if (!Array.isArray(v))
    throw mismatch(e.pos, `${role} must be a list, got ${typeName(v)} from ${printExpression(e)}`);
  return v as readonly unknown[];
}

class Evaluator {
  constructor(private readonly env: EvaluationEnv) {}

  private element(list: readonly unknown[], i: number, of: Expr): Value {
    return toValue(list[i], of.pos, () => `${printExpression(of)}[${i}]`);
  }

  private field(struct: Readonly<Record<string, unknown>>, name: string, of: Expr, pos: Position): Value {
    if (!Object.hasOwn(struct, name)) {
      throw new PolicyEvaluationError('MissingField', pos, `${printExpression(of)} has no field '${name}'`);
    }
    return toValue(struct[name], pos, () => `${printExpression(of)}.${name}`);
  }

  ev(e: Expr, scope: Scope | undefined): Value {
    switch (e.kind) {
      case 'int':
      case 'string':
      case 'bool':
        return e.value;
      case 'list':
        return e.items.map((item) => this.ev(item, scope));
      case 'ident': {
        for (let s = scope; s !== undefined; s = s.parent) if (s.name === e.name) return s.value;
        if (e.name === 'time') return { now: new Timestamp(BigInt(this.env.now.getTime()) * 1_000_000n) };
        if (!Object.hasOwn(this.env.bindings, e.name)) {
          throw new PolicyEvaluationError(
            'MissingField',
            e.pos,
            `'${e.name}' is not available for this request`,
          );
        }
        return toValue(this.env.bindings[e.name], e.pos, () => e.name);
      }
      case 'member': {
        const obj = this.ev(e.object, scope);
        if (Array.isArray(obj) && e.name === 'count') return BigInt(obj.length);
        if (isStruct(obj)) return this.field(obj, e.name, e.object, e.pos);
        throw mismatch(
          e.pos,
          `${printExpression(e.object)} is ${article(typeName(obj))}; it has no field '${e.name}'`,
        );
      }
      case 'index': {
        const obj = this.ev(e.object, scope);
        const idx = this.ev(e.index, scope);
        if (isStruct(obj)) {
          if (typeof idx !== 'string')
            throw mismatch(e.index.pos, `a struct is indexed by a string, got ${typeName(idx)}`);
          return this.field(obj, idx, e.object, e.pos);
        }
        if (Array.isArray(obj) || typeof obj === 'string') {
          const i = asInt(idx, e.index, 'an index');
          if (i < 0n || i >= BigInt(obj.length)) {
            throw new PolicyEvaluationError(
              'IndexOutOfRange',
              e.index.pos,
              `index ${i} is outside ${printExpression(e.object)} (length ${obj.length})`,
            );
          }
          return typeof obj === 'string'
            ? (obj[Number(i)] as string)
            : this.element(obj, Number(i), e.object);
        }
        throw mismatch(
          e.pos,
          `${printExpression(e.object)} is ${article(typeName(obj))}; it cannot be indexed`,
        );
      }
      case 'slice': {
        const obj = this.ev(e.object, scope);
        const start = e.start === null ? 0n : asInt(this.ev(e.start, scope), e.start, 'a slice bound');
        const end = e.end === null ? null : asInt(this.ev(e.end, scope), e.end, 'a slice bound');
        if (typeof obj !== 'string' && !Array.isArray(obj)) {
          throw mismatch(
            e.pos,
            `${printExpression(e.object)} is ${article(typeName(obj))}; only lists and strings slice`,
          );
        }
        for (const [b, at] of [
          [start, e.start],
          [end, e.end],
        ] as const) {
          if (b !== null && b < 0n) {
            throw new PolicyEvaluationError('IndexOutOfRange', (at ?? e).pos, `slice bound ${b} is negative`);
          }
        }
        // Bounds past the end are clamped, as in most languages: `data[0..10]` of a short
        // calldata is the whole of it, which then simply fails to equal a 10-character selector.
        const len = BigInt(obj.length);
        const from = Number(start > len ? len : start);
        const to = Number(end === null || end > len ? len : end);
        return obj.slice(from, Math.max(from, to));
      }
      case 'unary': {
        const v = this.ev(e.operand, scope);
        return e.op === '!'
          ? !asBool(v, e.operand, "the operand of '!'")
          : -asInt(v, e.operand, "the operand of '-'");
      }
      case 'binary': {
        // No short-circuit (turnkey-api.md 8.2): both sides are always evaluated, so an error on
        // either side makes the whole expression an error.
        const l = this.ev(e.left, scope);
        const r = this.ev(e.right, scope);
        switch (e.op) {
          case '&&':
          case '||': {
            const a = asBool(l, e.left, `the left side of '${e.op}'`);
            const b = asBool(r, e.right, `the right side of '${e.op}'`);
            return e.op === '&&' ? a && b : a || b;
          }
          case '==':
            return equal(l, r, e.pos);
          case '!=':
            return !equal(l, r, e.pos);
          case '<':
          case '<=':
          case '>':
          case '>=': {
            let a: bigint;
            let b: bigint;
            if (typeof l === 'bigint' && typeof r === 'bigint') [a, b] = [l, r];
            else if (l instanceof Timestamp && r instanceof Timestamp) [a, b] = [l.nanos, r.nanos];
            else
              throw mismatch(
                e.pos,
                `'${e.op}' compares ints or timestamps, not ${typeName(l)} and ${typeName(r)}`,
              );
            return e.op === '<' ? a < b : e.op === '<=' ? a <= b : e.op === '>' ? a > b : a >= b;
          }
          case 'in': {
            const list = asList(r, e.right, "the right side of 'in'");
            let found = false;
            for (let i = 0; i < list.length; i++)
              if (equal(l, this.element(list, i, e.right), e.pos)) found = true;
            return found;
          }
          default: {
            const never: never = e;
            return never;
          }
        }
      }
      case 'macro': {
        const list = asList(this.ev(e.target, scope), e.target, `the target of '${e.name}'`);
        const kept: unknown[] = [];
        let all = true;
        let any = false;
        for (let i = 0; i < list.length; i++) {
          const inner: Scope = { name: e.variable, value: this.element(list, i, e.target), parent: scope };
          const ok = asBool(this.ev(e.predicate, inner), e.predicate, `the predicate of '${e.name}'`);
          all &&= ok;
          any ||= ok;
          if (ok) kept.push(list[i]);
        }
        return e.name === 'all' ? all : e.name === 'any' ? any : kept;
      }
      case 'method': {
        const target = this.ev(e.target, scope);
        if (e.name === 'count') {
          return BigInt(asList(target, e.target, "the target of 'count'").length);
        }
        const [argExpr] = e.args as [Expr];
        const arg = this.ev(argExpr, scope);
        if (typeof target === 'string') {
          if (typeof arg !== 'string')
            throw mismatch(argExpr.pos, `a string contains strings, not ${typeName(arg)}`);
          return HEX_0X.test(target)
            ? target.toLowerCase().includes(arg.toLowerCase())
            : target.includes(arg);
        }
        const list = asList(target, e.target, "the target of 'contains'");
        let found = false;
        for (let i = 0; i < list.length; i++)
          if (equal(this.element(list, i, e.target), arg, e.pos)) found = true;
        return found;
      }
      case 'timestamp':
        return new Timestamp(e.nanos);
      case 'cronSpan':
        return isWithinCronSpan(e.spec, this.env.now.getTime());
      default: {
        const never: never = e;
        return never;
      }
    }
  }
}

/**
 * Evaluates an expression. A missing field, a type error or an index out of range throws
 * PolicyEvaluationError (with its kind and position); nothing is short-circuited.
 */
export function evaluate(expr: Expr, env: EvaluationEnv): Value {
  return new Evaluator(env).ev(expr, undefined);
}
