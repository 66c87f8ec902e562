import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import {
  inSpan,
  inSpanSync,
  NO_TRACE_FIELDS,
  traceLogFields,
  traceparentHeader,
  tracingEnabled,
} from './tracing.js';

describe('tracing off (no --otlp-endpoint)', () => {
  it('runs the function and nothing else: the very promise it returned, no header, no log fields', async () => {
    expect(tracingEnabled()).toBe(false);
    const p = Promise.resolve(7);
    expect(inSpan('sign', () => p)).toBe(p);
    expect(await inSpan('sign', () => p)).toBe(7);
    const o = {};
    expect(inSpanSync('verify', () => o)).toBe(o);
    expect(() =>
      inSpanSync('verify', () => {
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(traceparentHeader()).toEqual({});
    expect(traceLogFields()).toBe(NO_TRACE_FIELDS);
  });

  it('logs lines without trace fields and never writes into the shared empty mixin object', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger('info', sink);
    log.info({ activityId: 'a1' }, 'one');
    log.error({ err: new Error('x') }, 'two');
    expect(Object.keys(NO_TRACE_FIELDS)).toEqual([]);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.map((l) => l.msg)).toEqual(['one', 'two']);
    for (const l of parsed) expect(l.trace_id).toBeUndefined();
    expect(parsed[0]?.activityId).toBe('a1');
  });
});
