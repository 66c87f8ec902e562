/** The lexer of the policy language: single-quoted strings, decimal ints, identifiers, operators. */
import { CountersignError } from '../../shared/errors.js';
import type { Position } from './ast.js';

export const PUNCTUATORS = [
  '&&',
  '||',
  '==',
  '!=',
  '<=',
  '>=',
  '..',
  '<',
  '>',
  '!',
  '-',
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
] as const;
export type Punctuator = (typeof PUNCTUATORS)[number];

export type Token =
  | { readonly type: 'int'; readonly value: bigint; readonly text: string; readonly pos: Position }
  | { readonly type: 'string'; readonly value: string; readonly text: string; readonly pos: Position }
  | { readonly type: 'ident'; readonly value: string; readonly text: string; readonly pos: Position }
  | { readonly type: 'punct'; readonly value: Punctuator; readonly text: string; readonly pos: Position }
  | { readonly type: 'eof'; readonly text: ''; readonly pos: Position };

/** Longest source accepted; a policy is a short expression and the parser recurses on nesting. */
export const MAX_EXPRESSION_LENGTH = 16_384;

/** Line and column (1-based, columns in code points) of a UTF-16 offset. */
export function positionAt(source: string, offset: number): Position {
  return positionTracker(source)(offset);
}

/**
 * A position function for one source that walks forward from the last offset asked for, so the
 * lexer's in-order questions cost linear time in all.
 */
function positionTracker(source: string): (offset: number) => Position {
  let at = 0;
  let line = 1;
  let column = 1;
  return (offset) => {
    if (offset < at) {
      at = 0;
      line = 1;
      column = 1;
    }
    for (; at < offset && at < source.length; at++) {
      const c = source.charCodeAt(at);
      if (c === 0x0a || (c === 0x0d && source.charCodeAt(at + 1) !== 0x0a)) {
        line++;
        column = 1;
      } else if (c === 0x0d) {
        // The CR of a CRLF: the LF ends the line.
      } else if (c >= 0xdc00 && c <= 0xdfff && at > 0 && isHighSurrogate(source.charCodeAt(at - 1))) {
        // The second half of a surrogate pair is the same code point.
      } else {
        column++;
      }
    }
    return { offset, line, column };
  };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** The error of an invalid expression: FIELD_INVALID naming the field and the position. */
export function syntaxError(field: string, pos: Position, what: string): CountersignError {
  return new CountersignError(
    'FIELD_INVALID',
    `${field}: invalid policy expression at line ${pos.line} column ${pos.column}: ${what}`,
    { field, meta: { line: pos.line, column: pos.column } },
  );
}

/** How a token reads in an error message. */
export function describeToken(t: Token): string {
  switch (t.type) {
    case 'eof':
      return 'end of input';
    case 'int':
      return `integer ${t.text}`;
    case 'string':
      return `string ${t.text.length > 40 ? `${t.text.slice(0, 37)}...` : t.text}`;
    case 'ident':
      return t.value === 'true' || t.value === 'false' || t.value === 'in'
        ? `keyword '${t.value}'`
        : `identifier '${t.value}'`;
    case 'punct':
      return `'${t.value}'`;
    default: {
      const never: never = t;
      return String(never);
    }
  }
}

const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isIdentStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isIdentPart = (c: string): boolean => isIdentStart(c) || isDigit(c);

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  r: '\r',
  t: '\t',
  '0': '\0',
};

/** Splits `source` into tokens, ending with one `eof`; throws FIELD_INVALID at the first bad character. */
export function tokenize(source: string, field: string): Token[] {
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw syntaxError(
      field,
      positionAt(source, MAX_EXPRESSION_LENGTH),
      `longer than ${MAX_EXPRESSION_LENGTH} characters`,
    );
  }
  const tokens: Token[] = [];
  let i = 0;
  const at = positionTracker(source);
  while (i < source.length) {
    const c = source[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (isDigit(c)) {
      while (i < source.length && isDigit(source[i] as string)) i++;
      if (i < source.length && isIdentStart(source[i] as string)) {
        throw syntaxError(
          field,
          at(start),
          `malformed number '${source.slice(start, i + 1)}' (only decimal integers)`,
        );
      }
      const text = source.slice(start, i);
      tokens.push({ type: 'int', value: BigInt(text), text, pos: at(start) });
      continue;
    }
    if (isIdentStart(c)) {
      while (i < source.length && isIdentPart(source[i] as string)) i++;
      const text = source.slice(start, i);
      tokens.push({ type: 'ident', value: text, text, pos: at(start) });
      continue;
    }
    if (c === "'") {
      i++;
      let value = '';
      for (;;) {
        if (i >= source.length || source[i] === '\n' || source[i] === '\r') {
          throw syntaxError(
            field,
            at(start),
            'unterminated string (a string ends with a single quote on the same line)',
          );
        }
        const d = source[i] as string;
        if (d === "'") {
          i++;
          break;
        }
        if (d !== '\\') {
          value += d;
          i++;
          continue;
        }
        const e = source[i + 1];
        const simple = e === undefined ? undefined : SIMPLE_ESCAPES[e];
        if (simple !== undefined) {
          value += simple;
          i += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) {
          value += String.fromCharCode(parseInt(source.slice(i + 2, i + 6), 16));
          i += 6;
        } else {
          throw syntaxError(
            field,
            at(i),
            `invalid escape '\\${e ?? ''}' (expected one of \\\\ \\' \\" \\n \\r \\t \\0 \\uXXXX)`,
          );
        }
      }
      tokens.push({ type: 'string', value, text: source.slice(start, i), pos: at(start) });
      continue;
    }
    if (c === '"') {
      throw syntaxError(field, at(start), 'double-quoted strings are not allowed; use single quotes');
    }
    const two = source.slice(i, i + 2);
    const punct = PUNCTUATORS.find((p) => (p.length === 2 ? p === two : p === c));
    if (punct !== undefined) {
      i += punct.length;
      tokens.push({ type: 'punct', value: punct, text: punct, pos: at(start) });
      continue;
    }
    const cp = source.codePointAt(i) as number;
    const shown = String.fromCodePoint(cp);
    const hint =
      c === '='
        ? "; did you mean '=='?"
        : c === '&'
          ? "; did you mean '&&'?"
          : c === '|'
            ? "; did you mean '||'?"
            : '';
    throw syntaxError(
      field,
      at(start),
      `unexpected character ${cp < 0x20 || cp === 0x7f ? `U+${cp.toString(16).padStart(4, '0').toUpperCase()}` : `'${shown}'`}${hint}`,
    );
  }
  tokens.push({ type: 'eof', text: '', pos: at(source.length) });
  return tokens;
}
