/** `Timestamp('<RFC 3339 with a zero offset>')` of the policy language. */

const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (RFC 3339, offset Z only, no leap second) into
 * nanoseconds since the Unix epoch, or says what is wrong with it.
 */
export function parseTimestamp(text: string): { readonly nanos: bigint } | { readonly error: string } {
  const m = RFC3339_UTC.exec(text);
  if (m === null)
    return { error: `'${text}' is not an RFC 3339 timestamp with offset Z (YYYY-MM-DDTHH:MM:SSZ)` };
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12) return { error: `month ${month} is out of range in '${text}'` };
  if (day < 1 || day > daysInMonth(year, month)) return { error: `day ${day} is out of range in '${text}'` };
  if (hour > 23 || minute > 59 || second > 59) return { error: `time of day is out of range in '${text}'` };
  const fraction = BigInt((m[7] ?? '').padEnd(9, '0'));
  const seconds =
    BigInt(daysFromCivil(year, month, day)) * 86_400n + BigInt(hour * 3600 + minute * 60 + second);
  return { nanos: seconds * 1_000_000_000n + fraction };
}
