/**
 * Fuzzing the policy-expression parser (fast-check, fixed seed, bounded runs): any input either
 * parses or is refused with a CountersignError naming the field (never another exception, never a
 * hang), and what parses prints to canonical text that parses and prints to the same text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseExpression } from '../../src/service/policy/parseExpression.js';
import { printExpression } from '../../src/service/policy/printExpression.js';
import { isCountersignError } from '../../src/shared/errors.js';

const SEED = 0x5eed16;
const TOKENS = [
  'activity.type',
  'eth.tx.to',
  'eth.tx.value',
  'approvers',
  '.any(u, u.id == ',
  '.all(x, ',
  '.count()',
  "'0xabc'",
  '"s"',
  '1',
  '0x10',
  '-',
  '+',
  '==',
  '!=',
  '<',
  '>=',
  '&&',
  '||',
  '!',
  'in',
  '[',
  ']',
  '(',
  ')',
  ',',
  'true',
  'false',
  ' ',
  '\\',
  "'",
];

function check(source: string): void {
  let expr;
  try {
    expr = parseExpression(source, 'condition');
  } catch (e) {
    expect(isCountersignError(e), String(e)).toBe(true);
    expect((e as { field?: string }).field).toBe('condition');
    return;
  }
  // Trees carry source positions, so the canonical text is compared: printing is a fixed point.
  const printed = printExpression(expr);
  expect(printExpression(parseExpression(printed, 'condition'))).toBe(printed);
}

describe('policy-expression parser fuzz', () => {
  it('refuses or round-trips arbitrary text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200, unit: 'binary' }), check), {
      seed: SEED,
      numRuns: 3000,
    });
  });

  it('refuses or round-trips token soup', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((t) => t.join('')),
        check,
      ),
      { seed: SEED, numRuns: 3000 },
    );
  });
});
