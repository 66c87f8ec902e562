import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import type { Expr } from './ast.js';
import { MAX_NESTING, parseExpression } from './parseExpression.js';
import { printExpression } from './printExpression.js';
import { MAX_EXPRESSION_LENGTH } from './tokenize.js';

interface ParserVectors {
  valid: { source: string; printed: string }[];
  invalid: { source: string; line: number; column: number; message: string }[];
}
const vectors = JSON.parse(
  readFileSync(new URL('../../../test/vectors/policy/parser.json', import.meta.url), 'utf8'),
) as ParserVectors;

const FIELD = 'parameters.condition';

function parseError(source: string): CountersignError {
  try {
    parseExpression(source, FIELD);
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error(`expected '${source}' to be rejected`);
}

/** The tree without positions (and CronSpan's derived spec), for comparing shapes. */
function shape(e: Expr): unknown {
  return JSON.parse(
    JSON.stringify(e, (k, v: unknown) =>
      k === 'pos' || k === 'spec' ? undefined : typeof v === 'bigint' ? `${v}n` : v,
    ),
  );
}

describe('parseExpression vectors', () => {
  it.each(vectors.valid)('parses $source', ({ source, printed }) => {
    const e = parseExpression(source, FIELD);
    expect(printExpression(e)).toBe(printed);
    expect(shape(parseExpression(printed, FIELD))).toEqual(shape(e));
  });

  it.each(vectors.invalid)('rejects $source at $line:$column', ({ source, line, column, message }) => {
    const err = parseError(source);
    expect(err.code).toBe('FIELD_INVALID');
    expect(err.field).toBe(FIELD);
    expect(err.message).toMatch(
      new RegExp(`^parameters\\.condition: invalid policy expression at line ${line} column ${column}: `),
    );
    expect(err.message).toContain(message);
    expect(err.meta).toEqual({ line, column });
  });
});

describe('parseExpression structure', () => {
  it('binds && tighter than || and comparisons tighter than &&', () => {
    const e = parseExpression('a == 1 || b && c != 2', FIELD);
    expect(e).toMatchObject({
      kind: 'binary',
      op: '||',
      left: { kind: 'binary', op: '==' },
      right: { kind: 'binary', op: '&&', right: { kind: 'binary', op: '!=' } },
    });
  });

  it('associates && and || to the left', () => {
    expect(parseExpression('a && b && c', FIELD)).toMatchObject({
      op: '&&',
      left: { op: '&&', left: { name: 'a' }, right: { name: 'b' } },
      right: { name: 'c' },
    });
  });

  it('applies ! to the postfix chain, not to the comparison', () => {
    expect(parseExpression('!a.b == c', FIELD)).toMatchObject({
      op: '==',
      left: { kind: 'unary', op: '!', operand: { kind: 'member', name: 'b' } },
    });
  });

  it('reads `in` as a comparison whose right side is a list', () => {
    expect(parseExpression("x in ['a', 'b'] && y", FIELD)).toMatchObject({
      op: '&&',
      left: { op: 'in', right: { kind: 'list', items: [{ value: 'a' }, { value: 'b' }] } },
    });
  });

  it('keeps .count without parentheses as a member and .count() as a method', () => {
    expect(parseExpression('l.count', FIELD)).toMatchObject({ kind: 'member', name: 'count' });
    expect(parseExpression('l.count()', FIELD)).toMatchObject({ kind: 'method', name: 'count', args: [] });
  });

  it('gives ints as bigint, and string escapes decoded', () => {
    expect(
      parseExpression(
        '115792089237316195423570985008687907853269984665640564039457584007913129639935',
        FIELD,
      ),
    ).toMatchObject({
      kind: 'int',
      value: 2n ** 256n - 1n,
    });
    expect(parseExpression("'a\\'b\\u00e9'", FIELD)).toMatchObject({ kind: 'string', value: "a'bé" });
  });

  it('records line and column of nodes across lines', () => {
    const e = parseExpression("a &&\n  b.c == 'x'", FIELD);
    expect(e).toMatchObject({
      pos: { line: 1, column: 3 },
      right: { pos: { line: 2, column: 7 }, left: { pos: { line: 2, column: 5 } } },
    });
  });

  it('counts columns in code points', () => {
    expect(parseError("'😀😀' == ?").message).toContain('line 1 column 9'); // 11 if counted in UTF-16 units
  });

  it('parses Timestamp to nanoseconds and CronSpan to a checked spec', () => {
    expect(parseExpression("Timestamp('1970-01-01T00:00:01.000000002Z')", FIELD)).toMatchObject({
      kind: 'timestamp',
      nanos: 1_000_000_002n,
    });
    const c = parseExpression("CronSpan('0 9 * * 1-5', '8h', 'UTC')", FIELD);
    expect(c.kind === 'cronSpan' && c.spec.durationMinutes).toBe(480);
  });

  it(`rejects nesting deeper than ${MAX_NESTING} and sources longer than ${MAX_EXPRESSION_LENGTH}`, () => {
    expect(parseExpression(`${'('.repeat(MAX_NESTING)}a${')'.repeat(MAX_NESTING)}`, FIELD)).toMatchObject({
      name: 'a',
    });
    expect(parseError(`${'('.repeat(MAX_NESTING + 1)}a${')'.repeat(MAX_NESTING + 1)}`).message).toContain(
      `nested deeper than ${MAX_NESTING}`,
    );
    expect(parseError('!'.repeat(10_000) + 'a').message).toContain('nested deeper');
    expect(parseError(`a${' '.repeat(MAX_EXPRESSION_LENGTH)}`).message).toContain('longer than');
  });
});

const ALPHABET = [...'abxyz_019 .,()[]!&|=<>-\'"\\\n\tinueTsCrp#@é😀'];

describe('parseExpression properties', () => {
  it('never throws anything but FIELD_INVALID on random input', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 60 }),
          fc.array(fc.constantFrom(...ALPHABET), { maxLength: 60 }).map((cs) => cs.join('')),
        ),
        (source) => {
          try {
            const e = parseExpression(source, FIELD);
            // Whatever parses prints to something that parses to the same tree.
            expect(shape(parseExpression(printExpression(e), FIELD))).toEqual(shape(e));
          } catch (err) {
            expect(err).toBeInstanceOf(CountersignError);
            expect((err as CountersignError).code).toBe('FIELD_INVALID');
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  const ident = fc
    .stringMatching(/^[a-z_][a-z0-9_]{0,5}$/)
    .filter((s) => !['true', 'false', 'in'].includes(s));
  const p = { offset: 0, line: 1, column: 1 };
  const { expr } = fc.letrec<{ expr: Expr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.bigInt({ min: 0n, max: 2n ** 130n }).map((value): Expr => ({ kind: 'int', value, pos: p })),
      fc.string({ maxLength: 8, unit: 'binary' }).map((value): Expr => ({ kind: 'string', value, pos: p })),
      fc.boolean().map((value): Expr => ({ kind: 'bool', value, pos: p })),
      ident.map((name): Expr => ({ kind: 'ident', name, pos: p })),
      fc.array(tie('expr'), { maxLength: 3 }).map((items): Expr => ({ kind: 'list', items, pos: p })),
      fc.tuple(tie('expr'), ident).map(([object, name]): Expr => ({ kind: 'member', object, name, pos: p })),
      fc
        .tuple(tie('expr'), tie('expr'))
        .map(([object, index]): Expr => ({ kind: 'index', object, index, pos: p })),
      fc
        .tuple(tie('expr'), fc.option(tie('expr'), { nil: null }), fc.option(tie('expr'), { nil: null }))
        .map(([object, start, end]): Expr => ({ kind: 'slice', object, start, end, pos: p })),
      fc
        .tuple(fc.constantFrom('!' as const, '-' as const), tie('expr'))
        .map(([op, operand]): Expr => ({ kind: 'unary', op, operand, pos: p })),
      fc
        .tuple(
          fc.constantFrom('&&', '||', '==', '!=', '<', '<=', '>', '>=', 'in' as const),
          tie('expr'),
          tie('expr'),
        )
        .map(([op, left, right]): Expr => ({ kind: 'binary', op, left, right, pos: p })),
      fc
        .tuple(fc.constantFrom('all', 'any', 'filter' as const), tie('expr'), ident, tie('expr'))
        .map(([name, target, variable, predicate]): Expr => ({
          kind: 'macro',
          name,
          target,
          variable,
          predicate,
          pos: p,
        })),
      fc
        .tuple(tie('expr'), fc.option(tie('expr'), { nil: undefined }))
        .map(([target, arg]): Expr =>
          arg === undefined
            ? { kind: 'method', name: 'count', target, args: [], pos: p }
            : { kind: 'method', name: 'contains', target, args: [arg], pos: p },
        ),
      fc
        .constantFrom("Timestamp('2026-03-01T00:00:00Z')", "CronSpan('0 9 * * 1-5', '8h', 'Europe/Paris')")
        .map((s) => parseExpression(s, FIELD)),
    ),
  }));

  it('parses what the printer prints back to the same tree', () => {
    fc.assert(
      fc.property(expr, (e) => {
        const printed = printExpression(e);
        const again = parseExpression(printed, FIELD);
        expect(shape(again)).toEqual(shape(e));
        expect(printExpression(again)).toBe(printed);
      }),
      { numRuns: 2000 },
    );
  });
});
