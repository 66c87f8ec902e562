import { describe, expect, it } from 'vitest';
import { isWithinCronSpan, parseCronSpan, type CronSpanSpec } from './parseCronSpan.js';

function spec(cron: string, duration: string, zone: string): CronSpanSpec {
  const r = parseCronSpan(cron, duration, zone);
  if ('error' in r) throw new Error(r.error);
  return r.spec;
}

const at = (iso: string): number => Date.parse(iso);

describe('parseCronSpan', () => {
  it('reads lists, ranges, steps and names', () => {
    const s = spec('*/20 8-10,22 1,15 jan-MAR,dec SUN,sat', '1d2h3m', 'UTC');
    expect([...s.minutes]).toEqual([0, 20, 40]);
    expect([...s.hours]).toEqual([8, 9, 10, 22]);
    expect([...s.daysOfMonth]).toEqual([1, 15]);
    expect([...s.months]).toEqual([1, 2, 3, 12]);
    expect([...s.daysOfWeek].sort()).toEqual([0, 6]);
    expect(s.durationMinutes).toBe(1440 + 120 + 3);
    expect(s.daysOfMonthRestricted && s.daysOfWeekRestricted).toBe(true);
  });

  it('reads 7 as Sunday and a range step', () => {
    expect([...spec('0 0 * * 7', '1m', 'UTC').daysOfWeek]).toEqual([0]);
    expect([...spec('0-30/10 0 * * *', '1m', 'UTC').minutes]).toEqual([0, 10, 20, 30]);
  });

  it.each([
    ['* * * *', '1h', 'UTC', 0, 'must have 5 fields'],
    ['* * * * * *', '1h', 'UTC', 0, 'must have 5 fields'],
    ['* 24 * * *', '1h', 'UTC', 0, "hour field: '24'"],
    ['* * 0 * *', '1h', 'UTC', 0, 'day of month field'],
    ['* * * 13 *', '1h', 'UTC', 0, 'month field'],
    ['* * * * 8', '1h', 'UTC', 0, 'day of week field'],
    ['*/0 * * * *', '1h', 'UTC', 0, 'step must be at least 1'],
    ['5/10 * * * *', '1h', 'UTC', 0, "a step needs '*' or a range"],
    ['* * * * MON-FOO', '1h', 'UTC', 0, "'FOO'"],
    ['* * * * *', '7d1m', 'UTC', 1, 'longer than 7d'],
    ['* * * * *', '', 'UTC', 1, 'NdNhNm'],
    ['* * * * *', 'h', 'UTC', 1, 'NdNhNm'],
    ['* * * * *', '1m1h', 'UTC', 1, 'NdNhNm'],
    ['* * * * *', '1h', 'Not/AZone', 2, 'not an IANA time zone'],
  ] as const)('rejects %s / %s / %s', (cron, duration, zone, argument, message) => {
    const r = parseCronSpan(cron, duration, zone);
    expect(r).toMatchObject({ argument });
    expect('error' in r && r.error).toContain(message);
  });

  it('accepts the longest window, 7d', () => {
    expect(spec('0 0 * * 1', '7d', 'UTC').durationMinutes).toBe(7 * 1440);
  });
});

describe('isWithinCronSpan', () => {
  const business = spec('0 9 * * 1-5', '8h', 'UTC');

  it.each([
    ['2026-03-16T09:00:00Z', true], // Monday, the fire instant itself
    ['2026-03-16T12:30:00Z', true],
    ['2026-03-16T16:59:59.999Z', true],
    ['2026-03-16T17:00:00Z', false], // end exclusive
    ['2026-03-16T08:59:59Z', false],
    ['2026-03-21T10:00:00Z', false], // Saturday
    ['2026-03-20T16:00:00Z', true], // Friday
  ])('UTC business hours at %s: %s', (iso, expected) => {
    expect(isWithinCronSpan(business, at(iso))).toBe(expected);
  });

  it('holds a window open across midnight and across the week', () => {
    const night = spec('0 22 * * *', '4h', 'UTC');
    expect(isWithinCronSpan(night, at('2026-03-17T01:59:00Z'))).toBe(true);
    expect(isWithinCronSpan(night, at('2026-03-17T02:00:00Z'))).toBe(false);
    const weekend = spec('0 18 * * FRI', '2d15h', 'UTC');
    expect(isWithinCronSpan(weekend, at('2026-03-23T08:59:00Z'))).toBe(true); // Monday morning
    expect(isWithinCronSpan(weekend, at('2026-03-23T09:00:00Z'))).toBe(false);
    expect(isWithinCronSpan(weekend, at('2026-03-20T17:59:00Z'))).toBe(false);
  });

  it('reads the cron on the wall clock of a fixed-offset zone', () => {
    // India is UTC+05:30 all year: 09:00 there is 03:30Z.
    const india = spec('0 9 * * *', '1h', 'Asia/Kolkata');
    expect(isWithinCronSpan(india, at('2026-01-10T03:30:00Z'))).toBe(true);
    expect(isWithinCronSpan(india, at('2026-07-10T04:29:59Z'))).toBe(true);
    expect(isWithinCronSpan(india, at('2026-07-10T04:30:00Z'))).toBe(false);
    expect(isWithinCronSpan(india, at('2026-07-10T09:00:00Z'))).toBe(false);
    // Etc/GMT-5 is UTC+5 (POSIX sign): midnight there is 19:00Z the day before.
    const plus5 = spec('0 0 1 * *', '30m', 'Etc/GMT-5');
    expect(isWithinCronSpan(plus5, at('2026-04-30T19:15:00Z'))).toBe(true);
    expect(isWithinCronSpan(plus5, at('2026-05-01T00:15:00Z'))).toBe(false);
  });

  it('reads the day of week in the zone, not in UTC', () => {
    // Monday 00:30 in Kolkata is Sunday 19:00Z.
    const mondays = spec('30 0 * * 1', '1h', 'Asia/Kolkata');
    expect(isWithinCronSpan(mondays, at('2026-03-15T19:10:00Z'))).toBe(true);
    expect(isWithinCronSpan(mondays, at('2026-03-16T19:10:00Z'))).toBe(false);
  });

  it('matches either day field when both are restricted (Vixie cron)', () => {
    const either = spec('0 12 13 * 5', '1m', 'UTC');
    expect(isWithinCronSpan(either, at('2026-03-13T12:00:30Z'))).toBe(true); // Friday the 13th
    expect(isWithinCronSpan(either, at('2026-04-13T12:00:30Z'))).toBe(true); // a Monday, the 13th
    expect(isWithinCronSpan(either, at('2026-04-17T12:00:30Z'))).toBe(true); // a Friday
    expect(isWithinCronSpan(either, at('2026-04-14T12:00:30Z'))).toBe(false);
    const both = spec('0 12 */1 * 5', '1m', 'UTC');
    expect(isWithinCronSpan(both, at('2026-04-13T12:00:30Z'))).toBe(false);
  });

  it('follows daylight saving in a zone that has it', () => {
    const ny = spec('0 9 * * 1-5', '8h', 'America/New_York');
    expect(isWithinCronSpan(ny, at('2026-01-12T14:00:00Z'))).toBe(true); // 09:00 EST
    expect(isWithinCronSpan(ny, at('2026-01-12T13:30:00Z'))).toBe(false);
    expect(isWithinCronSpan(ny, at('2026-07-13T13:00:00Z'))).toBe(true); // 09:00 EDT
    expect(isWithinCronSpan(ny, at('2026-07-13T21:00:00Z'))).toBe(false); // 17:00 EDT
  });

  it('checks a 7-day window quickly', () => {
    const rare = spec('0 0 29 2 *', '7d', 'Europe/Paris');
    const t0 = performance.now();
    expect(isWithinCronSpan(rare, at('2026-03-15T12:00:00Z'))).toBe(false);
    expect(performance.now() - t0).toBeLessThan(500);
  });
});
