import {
  FUNCTIONS,
  MACROS,
  METHODS,
  type Expr,
  type FunctionName,
  type MacroName,
  type MethodName,
  type RelationalOp,
} from './ast.js';
import { parseCronSpan } from './parseCronSpan.js';
import { parseTimestamp } from './parseTimestamp.js';
import { describeToken, syntaxError, tokenize, type Punctuator, type Token } from './tokenize.js';

/** Deepest nesting of parentheses, brackets and unary operators; keeps recursion far from the stack limit. */
export const MAX_NESTING = 64;

const RELATIONAL: ReadonlySet<string> = new Set<RelationalOp>(['==', '!=', '<', '<=', '>', '>=']);
const KEYWORDS: ReadonlySet<string> = new Set(['true', 'false', 'in']);

class Parser {
  private i = 0;
  private depth = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly field: string,
  ) {}

  private peek(): Token {
    return this.tokens[this.i] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.type !== 'eof') this.i++;
    return t;
  }

  private fail(t: Token, what: string): never {
    throw syntaxError(this.field, t.pos, what);
  }

  private isPunct(p: Punctuator): boolean {
    const t = this.peek();
    return t.type === 'punct' && t.value === p;
  }

  private expectPunct(p: Punctuator, context: string): Token {
    const t = this.peek();
    if (t.type === 'punct' && t.value === p) return this.next();
    return this.fail(t, `expected '${p}' ${context}, found ${describeToken(t)}`);
  }

  private enter(t: Token): void {
    if (++this.depth > MAX_NESTING) this.fail(t, `nested deeper than ${MAX_NESTING} levels`);
  }

  parseAll(): Expr {
    if (this.peek().type === 'eof') this.fail(this.peek(), 'expected an expression, found end of input');
    const e = this.parseOr();
    const t = this.peek();
    if (t.type !== 'eof') {
      const hint =
        t.type === 'punct' && (t.value === ')' || t.value === ']') ? ` (unbalanced '${t.value}')` : '';
      this.fail(t, `expected an operator or end of input, found ${describeToken(t)}${hint}`);
    }
    return e;
  }

  private parseOr(): Expr {
    let left = this.parseAnd();
    while (this.isPunct('||')) {
      const op = this.next();
      left = { kind: 'binary', op: '||', left, right: this.parseAnd(), pos: op.pos };
    }
    return left;
  }

  private parseAnd(): Expr {
    let left = this.parseRelation();
    while (this.isPunct('&&')) {
      const op = this.next();
      left = { kind: 'binary', op: '&&', left, right: this.parseRelation(), pos: op.pos };
    }
    return left;
  }

  private relationalOp(): RelationalOp | undefined {
    const t = this.peek();
    if (t.type === 'punct' && RELATIONAL.has(t.value)) return t.value as RelationalOp;
    if (t.type === 'ident' && t.value === 'in') return 'in';
    return undefined;
  }

  /** Comparisons do not chain: `a < b < c` is an error, as it is in most languages that type it. */
  private parseRelation(): Expr {
    const left = this.parseUnary();
    const op = this.relationalOp();
    if (op === undefined) return left;
    const opToken = this.next();
    const right = this.parseUnary();
    if (this.relationalOp() !== undefined) {
      this.fail(
        this.peek(),
        `comparisons do not chain; add parentheses before ${describeToken(this.peek())}`,
      );
    }
    return { kind: 'binary', op, left, right, pos: opToken.pos };
  }

  private parseUnary(): Expr {
    const t = this.peek();
    if (t.type === 'punct' && (t.value === '!' || t.value === '-')) {
      this.next();
      this.enter(t);
      const operand = this.parseUnary();
      this.depth--;
      return { kind: 'unary', op: t.value, operand, pos: t.pos };
    }
    return this.parsePostfix(this.parsePrimary());
  }

  private parsePostfix(start: Expr): Expr {
    let e = start;
    for (;;) {
      if (this.isPunct('.')) {
        this.next();
        const name = this.peek();
        if (name.type !== 'ident' || KEYWORDS.has(name.value)) {
          this.fail(name, `expected a field or method name after '.', found ${describeToken(name)}`);
        }
        this.next();
        if (this.isPunct('(')) {
          e = this.parseMethod(e, name);
        } else {
          e = { kind: 'member', object: e, name: name.value, pos: name.pos };
        }
      } else if (this.isPunct('[')) {
        const open = this.next();
        this.enter(open);
        e = this.parseIndexOrSlice(e, open);
        this.depth--;
      } else {
        return e;
      }
    }
  }

  private parseIndexOrSlice(object: Expr, open: Token): Expr {
    let start: Expr | null = null;
    if (!this.isPunct('..')) {
      if (this.isPunct(']'))
        this.fail(this.peek(), "expected an index or a slice 'a..b' inside '[]', found ']'");
      start = this.parseOr();
      if (this.isPunct(']')) {
        this.next();
        return { kind: 'index', object, index: start, pos: open.pos };
      }
    }
    this.expectPunct('..', 'or a closing bracket in the index');
    const end = this.isPunct(']') ? null : this.parseOr();
    this.expectPunct(']', "to close the slice opened by '['");
    return { kind: 'slice', object, start, end, pos: open.pos };
  }

  private parseArgs(context: string): Expr[] {
    const open = this.expectPunct('(', context);
    this.enter(open);
    const args: Expr[] = [];
    if (!this.isPunct(')')) {
      for (;;) {
        args.push(this.parseOr());
        if (!this.isPunct(',')) break;
        this.next();
      }
    }
    this.expectPunct(')', `to close the arguments of ${context}`);
    this.depth--;
    return args;
  }

  private parseMethod(target: Expr, name: Token & { type: 'ident' }): Expr {
    const method = name.value;
    if ((MACROS as readonly string[]).includes(method)) {
      const open = this.expectPunct('(', `after '${method}'`);
      this.enter(open);
      const v = this.peek();
      if (v.type !== 'ident' || KEYWORDS.has(v.value)) {
        this.fail(
          v,
          `expected a variable name as the first argument of '${method}', found ${describeToken(v)}`,
        );
      }
      this.next();
      this.expectPunct(',', `after the variable of '${method}'`);
      const predicate = this.parseOr();
      this.expectPunct(')', `to close '${method}(${v.value}, …)' (it takes a variable and one predicate)`);
      this.depth--;
      return {
        kind: 'macro',
        name: method as MacroName,
        target,
        variable: v.value,
        predicate,
        pos: name.pos,
      };
    }
    if ((METHODS as readonly string[]).includes(method)) {
      const args = this.parseArgs(`'${method}'`);
      const want = method === 'contains' ? 1 : 0;
      if (args.length !== want) {
        this.fail(
          name,
          `'${method}' takes ${want === 1 ? 'one argument' : 'no arguments'}, got ${args.length}`,
        );
      }
      return { kind: 'method', name: method as MethodName, target, args, pos: name.pos };
    }
    return this.fail(
      name,
      `unknown method '${method}' (expected one of ${[...MACROS, ...METHODS].join(', ')})`,
    );
  }

  private parseFunction(name: Token & { type: 'ident' }): Expr {
    const fn = name.value as FunctionName;
    const open = this.expectPunct('(', `after '${fn}'`);
    const args: (Token & { type: 'string' })[] = [];
    const arity = fn === 'Timestamp' ? 1 : 3;
    if (!this.isPunct(')')) {
      for (;;) {
        const a = this.peek();
        if (a.type !== 'string')
          this.fail(a, `arguments of '${fn}' must be string literals, found ${describeToken(a)}`);
        args.push(a);
        this.next();
        if (!this.isPunct(',')) break;
        this.next();
      }
    }
    this.expectPunct(')', `to close the arguments of '${fn}'`);
    if (args.length !== arity)
      this.fail(open, `'${fn}' takes ${arity} string argument${arity > 1 ? 's' : ''}, got ${args.length}`);
    if (fn === 'Timestamp') {
      const a = args[0] as Token & { type: 'string' };
      const r = parseTimestamp(a.value);
      if ('error' in r) this.fail(a, r.error);
      return { kind: 'timestamp', source: a.value, nanos: r.nanos, pos: name.pos };
    }
    const [cron, duration, zone] = args.map((a) => a.value) as [string, string, string];
    const r = parseCronSpan(cron, duration, zone);
    if ('error' in r) this.fail(args[r.argument] as Token, r.error);
    return { kind: 'cronSpan', cron, duration, timeZone: zone, spec: r.spec, pos: name.pos };
  }

  private parsePrimary(): Expr {
    const t = this.peek();
    switch (t.type) {
      case 'int':
        this.next();
        return { kind: 'int', value: t.value, pos: t.pos };
      case 'string':
        this.next();
        return { kind: 'string', value: t.value, pos: t.pos };
      case 'ident': {
        this.next();
        if (t.value === 'true' || t.value === 'false')
          return { kind: 'bool', value: t.value === 'true', pos: t.pos };
        if (t.value === 'in') this.fail(t, "expected an expression, found keyword 'in'");
        if ((FUNCTIONS as readonly string[]).includes(t.value)) return this.parseFunction(t);
        if (this.isPunct('(')) {
          this.fail(t, `unknown function '${t.value}' (expected one of ${FUNCTIONS.join(', ')})`);
        }
        return { kind: 'ident', name: t.value, pos: t.pos };
      }
      case 'punct':
        if (t.value === '(') {
          this.next();
          this.enter(t);
          const e = this.parseOr();
          this.expectPunct(')', `to close the '(' at line ${t.pos.line} column ${t.pos.column}`);
          this.depth--;
          return e;
        }
        if (t.value === '[') {
          this.next();
          this.enter(t);
          const items: Expr[] = [];
          if (!this.isPunct(']')) {
            for (;;) {
              items.push(this.parseOr());
              if (!this.isPunct(',')) break;
              this.next();
            }
          }
          this.expectPunct(']', `to close the list opened at line ${t.pos.line} column ${t.pos.column}`);
          this.depth--;
          return { kind: 'list', items, pos: t.pos };
        }
        return this.fail(t, `expected an expression, found ${describeToken(t)}`);
      case 'eof':
        return this.fail(t, 'expected an expression, found end of input');
      default: {
        const never: never = t;
        return never;
      }
    }
  }
}

/**
 * Parses a policy expression (turnkey-api.md 8.3) into its syntax tree. Throws FIELD_INVALID naming
 * `field` with the line and column of the first problem; nothing else escapes.
 */
export function parseExpression(source: string, field: string): Expr {
  return new Parser(tokenize(source, field), field).parseAll();
}
