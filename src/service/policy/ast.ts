/** The syntax tree of a policy expression (turnkey-api.md 8.3), as `parseExpression` builds it. */
import type { CronSpanSpec } from './parseCronSpan.js';

/** Where a node starts in its source: UTF-16 offset, and 1-based line and column (in code points). */
export interface Position {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

export const LOGICAL_OPS = ['&&', '||'] as const;
export type LogicalOp = (typeof LOGICAL_OPS)[number];

export const RELATIONAL_OPS = ['==', '!=', '<', '<=', '>', '>=', 'in'] as const;
export type RelationalOp = (typeof RELATIONAL_OPS)[number];

export type BinaryOp = LogicalOp | RelationalOp;

/** Methods that bind a variable over a list: `list.all(v, pred)`. */
export const MACROS = ['all', 'any', 'filter'] as const;
export type MacroName = (typeof MACROS)[number];

/** Plain methods: `list.contains(x)`, `list.count()`. */
export const METHODS = ['contains', 'count'] as const;
export type MethodName = (typeof METHODS)[number];

/** Global functions; their arguments must be string literals so they are checked when a policy is created. */
export const FUNCTIONS = ['Timestamp', 'CronSpan'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

export type Expr =
  | { readonly kind: 'int'; readonly value: bigint; readonly pos: Position }
  | { readonly kind: 'string'; readonly value: string; readonly pos: Position }
  | { readonly kind: 'bool'; readonly value: boolean; readonly pos: Position }
  | { readonly kind: 'list'; readonly items: readonly Expr[]; readonly pos: Position }
  | { readonly kind: 'ident'; readonly name: string; readonly pos: Position }
  /** `object.name`; `.count` without parentheses is a member too, read as the length of a list. */
  | { readonly kind: 'member'; readonly object: Expr; readonly name: string; readonly pos: Position }
  /** `object[index]`: a list by int, a string by int, a struct by string (`m['key']`). */
  | { readonly kind: 'index'; readonly object: Expr; readonly index: Expr; readonly pos: Position }
  /** `object[start..end]`, either bound optional (null). */
  | {
      readonly kind: 'slice';
      readonly object: Expr;
      readonly start: Expr | null;
      readonly end: Expr | null;
      readonly pos: Position;
    }
  | { readonly kind: 'unary'; readonly op: '!' | '-'; readonly operand: Expr; readonly pos: Position }
  | {
      readonly kind: 'binary';
      readonly op: BinaryOp;
      readonly left: Expr;
      readonly right: Expr;
      readonly pos: Position;
    }
  | {
      readonly kind: 'macro';
      readonly name: MacroName;
      readonly target: Expr;
      readonly variable: string;
      readonly predicate: Expr;
      readonly pos: Position;
    }
  | {
      readonly kind: 'method';
      readonly name: MethodName;
      readonly target: Expr;
      readonly args: readonly Expr[];
      readonly pos: Position;
    }
  /** `Timestamp('2026-03-01T00:00:00Z')`: nanoseconds since the epoch, checked at parse time. */
  | { readonly kind: 'timestamp'; readonly source: string; readonly nanos: bigint; readonly pos: Position }
  /** `CronSpan('0 9 * * 1-5', '8h', 'UTC')`: true while now is inside a window, checked at parse time. */
  | {
      readonly kind: 'cronSpan';
      readonly cron: string;
      readonly duration: string;
      readonly timeZone: string;
      readonly spec: CronSpanSpec;
      readonly pos: Position;
    };
