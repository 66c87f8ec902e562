import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { compileExpression, compilePolicy } from './compilePolicy.js';

function rejection(f: () => unknown): CountersignError {
  try {
    f();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('compilePolicy', () => {
  it('parses the three expressions and treats absent or blank as always true', () => {
    const c = compilePolicy({
      condition: "activity.resource == 'POLICY'",
      consensus: "approvers.any(u, u.id == 'x')",
    });
    expect(c.condition).toMatchObject({ kind: 'binary' });
    expect(c.consensus).toMatchObject({ kind: 'macro' });
    expect(c.time).toBeUndefined();
    expect(compilePolicy({ condition: '  ', time: '' })).toEqual({
      condition: undefined,
      consensus: undefined,
      time: undefined,
    });
  });

  it('names the field that is wrong, under the given prefix', () => {
    const e = rejection(() =>
      compilePolicy({ condition: 'true', consensus: 'approvers.any(u,' }, 'parameters.policies[2]'),
    );
    expect(e.code).toBe('FIELD_INVALID');
    expect(e.field).toBe('parameters.policies[2].consensus');
    expect(e.message).toMatch(
      /^parameters\.policies\[2\]\.consensus: invalid policy expression at line 1 column 17: /,
    );
  });

  it('rejects keywords an expression may not read, with their position', () => {
    const typo = rejection(() =>
      compileExpression("activty.type == 'x'", 'condition', 'parameters.condition'),
    );
    expect(typo.message).toContain("line 1 column 1: unknown identifier 'activty'");
    const wrongRole = rejection(() =>
      compileExpression("approvers.count() > 1 && activity.kind == 'x'", 'consensus', 'c'),
    );
    expect(wrongRole.message).toContain(
      "column 26: unknown identifier 'activity' (a consensus may read 'approvers', 'credentials', 'time')",
    );
    expect(() => compileExpression('approvers.count() > 1', 'condition', 'c')).toThrow(
      /unknown identifier 'approvers'/,
    );
    expect(() => compileExpression('wallet.id == 1', 'time', 't')).toThrow(/unknown identifier 'wallet'/);
  });

  it('rejects an unknown field of a namespace', () => {
    expect(() => compileExpression("eth.transaction.to == '0x'", 'condition', 'c')).toThrow(
      /column 5: 'eth' has no field 'transaction' \(expected 'tx', 'eip_712', 'eip_7702_authorization'\)/,
    );
    expect(() => compileExpression('time.today', 'time', 't')).toThrow(/'time' has no field 'today'/);
    expect(
      compileExpression(
        'eth.eip_712.domain.chain_id == 1 && solana.tx.transfers.count == 0',
        'condition',
        'c',
      ),
    ).toBeDefined();
  });

  it('lets a bound variable shadow anything inside its predicate only', () => {
    expect(compileExpression("approvers.all(eth, eth.id != 'x')", 'consensus', 'c')).toBeDefined();
    expect(() => compileExpression("approvers.all(u, u.id != 'x') && u.id == 'y'", 'consensus', 'c')).toThrow(
      /column 34: unknown identifier 'u'/,
    );
  });
});
