import type { Expr } from './ast.js';

// Binding strength, weakest first; a child weaker than its slot is parenthesized.
const OR = 1;
const AND = 2;
const RELATION = 3;
const UNARY = 4;
const POSTFIX = 5;

function precedence(e: Expr): number {
  switch (e.kind) {
    case 'binary':
      return e.op === '||' ? OR : e.op === '&&' ? AND : RELATION;
    case 'unary':
      return UNARY;
    default:
      return POSTFIX;
  }
}

/** A string literal in single quotes, escaping what the lexer would not read back as itself. */
export function quote(value: string): string {
  let out = "'";
  for (const c of value) {
    const code = c.codePointAt(0) as number;
    if (c === "'" || c === '\\') out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f || (code >= 0xd800 && code <= 0xdfff))
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `${out}'`;
}

function wrap(e: Expr, min: number): string {
  const s = printExpression(e);
  return precedence(e) < min ? `(${s})` : s;
}

/** Prints a syntax tree back as source, in a canonical spacing with only the parentheses it needs. */
export function printExpression(e: Expr): string {
  switch (e.kind) {
    case 'int':
      return e.value.toString();
    case 'string':
      return quote(e.value);
    case 'bool':
      return e.value ? 'true' : 'false';
    case 'list':
      return `[${e.items.map(printExpression).join(', ')}]`;
    case 'ident':
      return e.name;
    case 'member':
      return `${wrap(e.object, POSTFIX)}.${e.name}`;
    case 'index':
      return `${wrap(e.object, POSTFIX)}[${printExpression(e.index)}]`;
    case 'slice':
      return `${wrap(e.object, POSTFIX)}[${e.start === null ? '' : printExpression(e.start)}..${
        e.end === null ? '' : printExpression(e.end)
      }]`;
    case 'unary':
      return `${e.op}${wrap(e.operand, UNARY)}`;
    case 'binary': {
      const p = precedence(e);
      // && and || associate to the left; comparisons do not chain at all.
      return `${wrap(e.left, p === RELATION ? p + 1 : p)} ${e.op} ${wrap(e.right, p + 1)}`;
    }
    case 'macro':
      return `${wrap(e.target, POSTFIX)}.${e.name}(${e.variable}, ${printExpression(e.predicate)})`;
    case 'method':
      return `${wrap(e.target, POSTFIX)}.${e.name}(${e.args.map(printExpression).join(', ')})`;
    case 'timestamp':
      return `Timestamp(${quote(e.source)})`;
    case 'cronSpan':
      return `CronSpan(${quote(e.cron)}, ${quote(e.duration)}, ${quote(e.timeZone)})`;
    default: {
      const never: never = e;
      return never;
    }
  }
}
