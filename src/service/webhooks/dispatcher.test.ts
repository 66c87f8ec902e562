import { describe, expect, it } from 'vitest';
import { backoffMs, classifyAnswer, retryAfterMs } from './dispatcher.js';

describe('classifyAnswer', () => {
  it.each([
    [200, 'DELIVERED'],
    [204, 'DELIVERED'],
    [299, 'DELIVERED'],
    [500, 'RETRY'],
    [503, 'RETRY'],
    [429, 'RETRY'],
    [301, 'FAILED'],
    [302, 'FAILED'],
    [400, 'FAILED'],
    [404, 'FAILED'],
    [410, 'FAILED'],
    [100, 'FAILED'],
  ] as const)('HTTP %i is %s', (status, outcome) => {
    expect(classifyAnswer(status)).toBe(outcome);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds and HTTP dates (RFC 9110 10.2.3)', () => {
    expect(retryAfterMs('7', now)).toBe(7_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(['3', '9'], now)).toBe(3_000);
  });
  it('ignores what it cannot read', () => {
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-5', now)).toBeUndefined();
  });
});

describe('backoffMs', () => {
  it('doubles per attempt between half and all of the step, and stops at the cap', () => {
    expect(backoffMs(1, 1_000, 60_000, () => 0)).toBe(500);
    expect(backoffMs(1, 1_000, 60_000, () => 0.999999)).toBe(1_000);
    expect(backoffMs(4, 1_000, 60_000, () => 0)).toBe(4_000);
    expect(backoffMs(30, 1_000, 60_000, () => 0.5)).toBe(45_000);
    expect(backoffMs(10_000, 1_000, 60_000, () => 1)).toBe(60_000);
  });
});
