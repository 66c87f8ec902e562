/**
 * JSON for request bodies: UTF-8 that must be valid, no key twice in one object (a reader of the
 * signed bytes must not be able to take a different value than we do), bounded nesting and array
 * lengths — all checked in one pass before `JSON.parse` builds anything.
 */
import { CountersignError } from './errors.js';

export interface StrictJsonLimits {
  /** Deepest nesting of objects and arrays (default 32). */
  readonly maxDepth?: number;
  /** Most elements in one array (default 1,000). */
  readonly maxArrayLength?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

const enum C {
  Quote = 0x22,
  Backslash = 0x5c,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
  OpenBracket = 0x5b,
  CloseBracket = 0x5d,
  Colon = 0x3a,
  Comma = 0x2c,
}

interface Frame {
  readonly kind: 'object' | 'array';
  readonly path: string;
  keys?: Set<string>;
  /** Object: the key just read, waiting for its value. Array: elements seen. */
  key?: string | undefined;
  count: number;
}

const childPath = (parent: string, key: string) => (parent === '' ? key : `${parent}.${key}`);

/** Decodes and parses a request body, refusing what a lenient parser would silently accept. */
export function parseJsonStrict(bytes: Uint8Array, limits: StrictJsonLimits = {}): unknown {
  const maxDepth = limits.maxDepth ?? 32;
  const maxArray = limits.maxArrayLength ?? 1_000;
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new CountersignError('REQUEST_MALFORMED', 'request body is not valid UTF-8');
  }
  const stack: Frame[] = [];
  const pathOf = (f: Frame) =>
    f.kind === 'object' ? childPath(f.path, f.key ?? '') : `${f.path}[${f.count}]`;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === C.Quote) {
      // A string: find its end, honouring escapes.
      let j = i + 1;
      let escaped = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === C.Backslash) {
          escaped = true;
          j += 2;
        } else if (d === C.Quote) break;
        else j++;
      }
      const top = stack[stack.length - 1];
      if (top !== undefined && top.kind === 'object' && top.key === undefined) {
        // A key when the object awaits one: the next non-space character must be ':'.
        let k = j + 1;
        while (k < n && (text[k] === ' ' || text[k] === '\n' || text[k] === '\r' || text[k] === '\t')) k++;
        if (text.charCodeAt(k) === C.Colon) {
          // Without an escape the key is its characters as they stand (a control character in
          // it fails the whole body's JSON.parse below).
          let key = text.slice(i + 1, j);
          if (escaped) {
            try {
              key = JSON.parse(text.slice(i, j + 1)) as string;
            } catch {
              throw new CountersignError('REQUEST_MALFORMED', 'request body is not valid JSON');
            }
          }
          top.keys ??= new Set();
          if (top.keys.has(key)) {
            const field = childPath(top.path, key);
            throw new CountersignError(
              'REQUEST_MALFORMED',
              `${field}: the key appears more than once in one object`,
              {
                field,
              },
            );
          }
          top.keys.add(key);
          top.key = key;
          i = k + 1;
          continue;
        }
      }
      i = j + 1;
      continue;
    }
    if (c === C.OpenBrace || c === C.OpenBracket) {
      const parent = stack[stack.length - 1];
      const path = parent === undefined ? '' : pathOf(parent);
      if (stack.length >= maxDepth)
        throw new CountersignError(
          'REQUEST_MALFORMED',
          `${path === '' ? 'request body' : path}: nesting deeper than ${maxDepth} levels`,
          path === '' ? {} : { field: path },
        );
      stack.push({ kind: c === C.OpenBrace ? 'object' : 'array', path, count: 0 });
    } else if (c === C.CloseBrace || c === C.CloseBracket) {
      const f = stack.pop();
      if (f?.kind === 'array' && !emptyBefore(text, i)) {
        // Count the last element (elements are counted at commas).
        countElement(f, maxArray);
      }
      const parent = stack[stack.length - 1];
      if (parent?.kind === 'object') parent.key = undefined;
    } else if (c === C.Comma) {
      const top = stack[stack.length - 1];
      if (top?.kind === 'array') countElement(top, maxArray);
      else if (top?.kind === 'object') top.key = undefined;
    }
    i++;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CountersignError('REQUEST_MALFORMED', 'request body is not valid JSON');
  }
}

/** Whether only whitespace stands between this ']' and its '['. */
function emptyBefore(text: string, close: number): boolean {
  let k = close - 1;
  while (k >= 0 && (text[k] === ' ' || text[k] === '\n' || text[k] === '\r' || text[k] === '\t')) k--;
  return text.charCodeAt(k) === C.OpenBracket;
}

function countElement(f: Frame, max: number): void {
  f.count++;
  if (f.count > max)
    throw new CountersignError('FIELD_TOO_LONG', `${f.path || 'request body'}: more than ${max} elements`, {
      field: f.path,
    });
}
