import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from './errors.js';
import { parseJsonStrict } from './parseJsonStrict.js';

const enc = (s: string) => new TextEncoder().encode(s);

function refusal(fn: () => unknown): CountersignError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('parseJsonStrict', () => {
  it('parses what JSON.parse parses, for any JSON value without duplicate keys', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonStrict(enc(text), { maxDepth: 64 })).toEqual(JSON.parse(text));
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it('refuses a key that appears twice, naming where', () => {
    const e = refusal(() =>
      parseJsonStrict(
        enc('{"organizationId":"a","parameters":{"x":1,"y":[{"k":1," k":2,"k":3}]},"organizationId":"b"}'),
      ),
    );
    expect(e.message).toBe('parameters.y[0].k: the key appears more than once in one object');
    const top = refusal(() => parseJsonStrict(enc('{"organizationId":"a", "organizationId" : "b"}')));
    expect(top.field).toBe('organizationId');
  });

  it('treats escaped spellings of one key as the same key', () => {
    expect(refusal(() => parseJsonStrict(enc('{"a":1,"\\u0061":2}'))).message).toMatch(/^a: the key appears/);
  });

  it('accepts the same key in different objects and strings that look like keys', () => {
    expect(parseJsonStrict(enc('{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\\"a\\":"}'))).toEqual({
      a: { a: 1 },
      b: [{ a: 1 }, { a: 2 }],
      c: '"a":',
    });
  });

  it('refuses nesting deeper than the limit before parsing', () => {
    const deep = '{"p":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    expect(refusal(() => parseJsonStrict(enc(deep))).message).toMatch(/nesting deeper than 32 levels/);
  });

  it('refuses arrays longer than the limit, naming the field', () => {
    const body = JSON.stringify({ parameters: { payloads: new Array(1001).fill('00') } });
    const e = refusal(() => parseJsonStrict(enc(body)));
    expect(e.code).toBe('FIELD_TOO_LONG');
    expect(e.field).toBe('parameters.payloads');
    expect(parseJsonStrict(enc(JSON.stringify({ a: new Array(1000).fill(1), b: [], c: [] })))).toBeTruthy();
  });

  it('refuses invalid UTF-8 instead of replacing it', () => {
    const bytes = new Uint8Array([...enc('{"a":"'), 0xff, 0xfe, ...enc('"}')]);
    expect(refusal(() => parseJsonStrict(bytes)).message).toBe('request body is not valid UTF-8');
  });

  it('finds a duplicate among keys with and without escapes, at random', () => {
    // Keys as JSON spells them (quotes, backslashes, control characters escaped), some repeated.
    const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('a', 'a\\', '"', '\u0001', 'é'));
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 8 }), (keys) => {
        const text = `{${keys.map((k, i) => `${JSON.stringify(k)}:${i}`).join(',')}}`;
        const repeated = new Set(keys).size !== keys.length;
        if (repeated)
          expect(refusal(() => parseJsonStrict(enc(text))).message).toMatch(/the key appears more than once/);
        else expect(parseJsonStrict(enc(text))).toEqual(JSON.parse(text));
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('refuses a key holding a raw control character', () => {
    // A tab inside the key's quotes, not the escape \t.
    expect(refusal(() => parseJsonStrict(enc('{"a\tb":1}'))).code).toBe('REQUEST_MALFORMED');
  });

  it('refuses malformed JSON with the project error', () => {
    for (const s of ['{', '{"a":}', '[1,]', 'nul', '{"a" 1}'])
      expect(refusal(() => parseJsonStrict(enc(s))).code).toBe('REQUEST_MALFORMED');
  });
});
