import { describe, expect, it } from 'vitest';
import { evaluate, type EvaluationEnv } from './evaluate.js';
import { parseExpression } from './parseExpression.js';
import { PolicyEvaluationError, Timestamp, type EvaluationErrorKind, type Value } from './values.js';

const NOW = new Date('2026-03-15T12:00:00Z');

const BINDINGS = {
  eth: {
    tx: { to: '0xabcdef0000000000000000000000000000000001', data: '0xa9059cbb00ff', value: 5n, chain_id: 1n },
  },
  solana: { tx: { transfers: [] as unknown[], account_keys: ['So1aNa', 'so1ana'] } },
  bitcoin: {
    tx: { version: 2, outputs: [{ value: 100n }, { value: 300n }], inputs: [{ vout: 0 }, { vout: 7 }] },
  },
  approvers: [
    { id: 'u1', tags: ['ops', 'T'], email: '', alias: 'a' },
    { id: 'u2', tags: ['T'], email: 'x@y', alias: '' },
    { id: 'u3', tags: [], email: '', alias: '' },
  ],
  m: { key: 'v', 'odd key': 1n },
  n: { tags: ['a'] },
  float: 1.5,
  nothing: null,
};

function run(source: string, bindings: Record<string, unknown> = BINDINGS, now = NOW): Value {
  const env: EvaluationEnv = { bindings, now };
  return evaluate(parseExpression(source, 'f'), env);
}

function failure(source: string, bindings?: Record<string, unknown>): PolicyEvaluationError {
  try {
    run(source, bindings);
  } catch (e) {
    if (e instanceof PolicyEvaluationError) return e;
    throw e;
  }
  throw new Error(`expected '${source}' to fail`);
}

function expectFailure(source: string, kind: EvaluationErrorKind, message?: string): void {
  const e = failure(source);
  expect(e.kind).toBe(kind);
  if (message !== undefined) expect(e.message).toContain(message);
}

describe('evaluate: logic and precedence', () => {
  it.each([
    ['true || false && false', true],
    ['(true || false) && false', false],
    ['!false && true', true],
    ['!(1 == 1)', false],
    ['1 < 2 == true', undefined],
  ])('%s', (source, expected) => {
    if (expected === undefined)
      expect(() => run(source)).toThrow(); // comparisons do not chain
    else expect(run(source)).toBe(expected);
  });

  it('does not short-circuit: an error on the right of a true || still fails', () => {
    expectFailure(
      'true || wallet.id == "x"'.replace('"x"', "'x'"),
      'MissingField',
      "'wallet' is not available",
    );
  });

  it('does not short-circuit: an error on the right of a false && still fails', () => {
    expectFailure('false && m.missing == 1', 'MissingField', "m has no field 'missing'");
  });

  it('needs bools on both sides of && and ||', () => {
    expectFailure('true && 1', 'TypeMismatch', "the right side of '&&' must be a bool, got int");
    expectFailure("'a' || true", 'TypeMismatch', "the left side of '||' must be a bool, got string");
    expectFailure('!1', 'TypeMismatch');
  });
});

describe('evaluate: values and comparisons', () => {
  it('compares ints as bigints, counting JS integers in facts as ints', () => {
    expect(run('eth.tx.value == 5 && eth.tx.value >= 5 && eth.tx.value < 6 && -eth.tx.value == -5')).toBe(
      true,
    );
    expect(run('bitcoin.tx.version == 2 && bitcoin.tx.inputs[1].vout > 6')).toBe(true);
    expect(run('340282366920938463463374607431768211456 > 340282366920938463463374607431768211455')).toBe(
      true,
    );
  });

  it('compares strings only with == and !=', () => {
    expect(run("m.key == 'v' && m.key != 'w'")).toBe(true);
    expectFailure("'a' < 'b'", 'TypeMismatch', "'<' compares ints or timestamps, not string and string");
  });

  it('refuses to compare values of different types', () => {
    expectFailure("1 == '1'", 'TypeMismatch', 'cannot compare int with string');
    expectFailure('m == m', 'TypeMismatch', 'cannot compare struct with struct');
    expectFailure('true < false', 'TypeMismatch');
  });

  it('compares 0x hex strings case-insensitively and other strings exactly', () => {
    expect(run("eth.tx.to == '0xABCDEF0000000000000000000000000000000001'")).toBe(true);
    expect(run("eth.tx.to in ['0x1', '0xAbCdEf0000000000000000000000000000000001']")).toBe(true);
    expect(run("solana.tx.account_keys[0] == 'so1ana'")).toBe(false);
    expect(run("'ABC' == 'abc'")).toBe(false);
    expect(run("'0xZZ' == '0xzz'")).toBe(false);
  });

  it('compares lists element by element', () => {
    expect(run("[1, 2] == [1, 2] && [1] != [1, 2] && n.tags == ['a']")).toBe(true);
    expectFailure("[1] == ['1']", 'TypeMismatch');
  });

  it('gives timestamps from Timestamp() and time.now, ordered', () => {
    expect(
      run("time.now >= Timestamp('2026-03-01T00:00:00Z') && time.now < Timestamp('2026-04-01T00:00:00Z')"),
    ).toBe(true);
    expect(run("time.now == Timestamp('2026-03-15T12:00:00Z')")).toBe(true);
    expect(run("time.now > Timestamp('2026-03-15T12:00:00.000000001Z')")).toBe(false);
    expect(run('time.now')).toEqual(new Timestamp(BigInt(NOW.getTime()) * 1_000_000n));
    expectFailure('time.now > 5', 'TypeMismatch');
  });

  it('evaluates CronSpan against the injected clock', () => {
    const inWindow = new Date('2026-03-16T16:59:59Z'); // Monday
    const after = new Date('2026-03-16T17:00:00Z');
    const expr = "CronSpan('0 9 * * 1-5', '8h', 'UTC')";
    expect(run(expr, {}, inWindow)).toBe(true);
    expect(run(expr, {}, after)).toBe(false);
  });
});

describe('evaluate: lists, structs, strings', () => {
  it('tests membership with in and contains', () => {
    expect(run('eth.tx.chain_id in [1, 11155111]')).toBe(true);
    expect(run('3 in []')).toBe(false);
    expect(run("approvers[0].tags.contains('T') && !approvers[2].tags.contains('T')")).toBe(true);
    expect(run("eth.tx.data.contains('A9059CBB') && m.key.contains('v')")).toBe(true);
    expectFailure("1 in ['a']", 'TypeMismatch');
    expectFailure("1 in 'abc'", 'TypeMismatch', "the right side of 'in' must be a list, got string");
  });

  it('counts lists with .count() and .count', () => {
    expect(run('approvers.count() == 3 && approvers.count == 3 && solana.tx.transfers.count == 0')).toBe(
      true,
    );
    expectFailure('m.key.count()', 'TypeMismatch');
    expectFailure('m.key.count', 'TypeMismatch', "it has no field 'count'");
  });

  it('runs all, any and filter over every element', () => {
    expect(run("approvers.filter(u, u.tags.contains('T')).count() >= 2")).toBe(true);
    expect(run("approvers.any(u, u.id == 'u2') && !approvers.all(u, u.id == 'u2')")).toBe(true);
    expect(run('solana.tx.transfers.all(t, t.to == 1) && !solana.tx.transfers.any(t, true)')).toBe(true);
    expect(run('bitcoin.tx.outputs.filter(o, o.value > 150)[0].value')).toBe(300n);
    // The variable shadows a keyword, and scopes nest.
    expect(run("approvers.any(m, m.id == 'u1') && [1, 2].all(x, [2, 1].any(y, x == y))")).toBe(true);
  });

  it('evaluates the predicate on every element: a later error fails even when any is already true', () => {
    expectFailure("approvers.any(u, u.id == 'u1' || u.tags[0] == 'T')", 'IndexOutOfRange');
  });

  it('needs a bool predicate and a list target', () => {
    expectFailure('approvers.all(u, u.id)', 'TypeMismatch', "the predicate of 'all' must be a bool");
    expectFailure('m.all(u, true)', 'TypeMismatch', "the target of 'all' must be a list, got struct");
  });

  it('indexes lists and strings by int and structs by string', () => {
    expect(run("approvers[1].id == 'u2' && m['key'] == 'v' && m['odd key'] == 1 && 'hello'[1] == 'e'")).toBe(
      true,
    );
    expectFailure('approvers[3]', 'IndexOutOfRange', 'index 3 is outside approvers (length 3)');
    expectFailure('approvers[-1]', 'IndexOutOfRange');
    expectFailure("approvers['x']", 'TypeMismatch', 'an index must be an int');
    expectFailure('m[0]', 'TypeMismatch', 'a struct is indexed by a string');
    expectFailure("m['nope']", 'MissingField', "m has no field 'nope'");
    expectFailure('true[0]', 'TypeMismatch');
  });

  it('slices strings and lists, clamping bounds past the end', () => {
    expect(run("eth.tx.data[0..10] == '0xa9059cbb'")).toBe(true);
    expect(
      run("eth.tx.data[..4] == '0xa9' && eth.tx.data[10..] == '00ff' && eth.tx.data[..] == eth.tx.data"),
    ).toBe(true);
    expect(run("'0x'[0..10] == '0x' && 'abc'[5..9] == '' && 'abc'[2..1] == ''")).toBe(true);
    expect(run('[1, 2, 3][1..] == [2, 3] && approvers[0..2].count == 2')).toBe(true);
    expectFailure("'abc'[-1..2]", 'IndexOutOfRange', 'slice bound -1 is negative');
    expectFailure("'abc'[0..'2']", 'TypeMismatch');
    expectFailure('m[0..1]', 'TypeMismatch', 'only lists and strings slice');
  });
});

describe('evaluate: missing and invalid facts', () => {
  it('fails with MissingField, with its position, for an absent keyword or field', () => {
    const e = failure("activity.type == 'x'");
    expect(e).toBeInstanceOf(PolicyEvaluationError);
    expect(e.kind).toBe('MissingField');
    expect(e.pos).toMatchObject({ line: 1, column: 1 });
    expect(e.message).toBe("MissingField at line 1 column 1: 'activity' is not available for this request");
    expectFailure('eth.tx.gas == 1', 'MissingField', "eth.tx has no field 'gas'");
    expectFailure('nothing == 1', 'MissingField', 'nothing is not present');
  });

  it('reads a field of a non-struct as a type error', () => {
    expectFailure('eth.tx.value.x', 'TypeMismatch', "eth.tx.value is an int; it has no field 'x'");
  });

  it('rejects facts the language has no type for', () => {
    expectFailure('float == 1', 'InvalidFact', 'float is the number 1.5');
    expectFailure('u8 == 1', 'MissingField');
    expect(() => run('b == 1', { b: new Uint8Array(1) })).toThrow(PolicyEvaluationError);
  });

  it('does not read inherited properties as fields', () => {
    expectFailure('m.constructor', 'MissingField');
    expectFailure("m['__proto__']", 'MissingField');
    expectFailure('toString', 'MissingField');
  });
});
