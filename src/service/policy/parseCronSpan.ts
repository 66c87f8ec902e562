/** `CronSpan('<5-field cron>', '<NdNhNm>', '<IANA time zone>')` of the policy language: parsing and checking. */

/** A checked CronSpan: the cron fields as sets of allowed values, the window length and the zone. */
export interface CronSpanSpec {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 = Sunday … 6 = Saturday (a 7 in the source is Sunday too). */
  readonly daysOfWeek: ReadonlySet<number>;
  /** Vixie cron: when both day fields are restricted (neither starts with `*`), a day matches either. */
  readonly daysOfMonthRestricted: boolean;
  readonly daysOfWeekRestricted: boolean;
  readonly durationMinutes: number;
  readonly timeZone: string;
}

/** The longest window a CronSpan may hold open (turnkey-api.md 8.3). */
export const MAX_SPAN_MINUTES = 7 * 24 * 60;

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** The value names[0] stands for. */
  readonly namesFrom?: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, namesFrom: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, namesFrom: 0 },
];

function parseValue(text: string, f: FieldSpec): number | undefined {
  if (/^\d{1,2}$/.test(text)) {
    const n = Number(text);
    return n >= f.min && n <= f.max ? n : undefined;
  }
  const i = f.names?.indexOf(text.toUpperCase()) ?? -1;
  return i < 0 ? undefined : i + (f.namesFrom ?? 0);
}

function parseField(text: string, f: FieldSpec): Set<number> | string {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\*|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:\/(\d{1,2}))?$/.exec(part);
    if (m === null) return `${f.name} field: cannot read '${part}'`;
    let lo = f.min;
    let hi = f.max;
    if (m[1] !== '*') {
      const a = parseValue(m[2] as string, f);
      if (a === undefined) return `${f.name} field: '${m[2]}' is not a value from ${f.min} to ${f.max}`;
      lo = a;
      hi = a;
      if (m[3] !== undefined) {
        const b = parseValue(m[3], f);
        if (b === undefined) return `${f.name} field: '${m[3]}' is not a value from ${f.min} to ${f.max}`;
        if (b < a) return `${f.name} field: range '${part}' runs backwards`;
        hi = b;
      } else if (m[4] !== undefined) {
        return `${f.name} field: a step needs '*' or a range, not '${part}'`;
      }
    }
    const step = m[4] === undefined ? 1 : Number(m[4]);
    if (step < 1) return `${f.name} field: step must be at least 1 in '${part}'`;
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Checks the three arguments of CronSpan; on failure says which argument (0, 1, 2) and why. */
export function parseCronSpan(
  cron: string,
  duration: string,
  timeZone: string,
): { readonly spec: CronSpanSpec } | { readonly error: string; readonly argument: 0 | 1 | 2 } {
  const parts = cron.trim().split(/\s+/);
  if (parts.length !== 5) {
    return {
      error: `cron '${cron}' must have 5 fields (minute hour day-of-month month day-of-week)`,
      argument: 0,
    };
  }
  const sets: Set<number>[] = [];
  for (const [i, f] of FIELDS.entries()) {
    const r = parseField(parts[i] as string, f);
    if (typeof r === 'string') return { error: `cron '${cron}': ${r}`, argument: 0 };
    sets.push(r);
  }
  const dow = sets[4] as Set<number>;
  if (dow.delete(7)) dow.add(0);

  const d = /^(?:(\d{1,4})d)?(?:(\d{1,6})h)?(?:(\d{1,7})m)?$/.exec(duration);
  if (d === null || duration === '') {
    return { error: `duration '${duration}' must look like 8h, 1d12h or 90m (NdNhNm)`, argument: 1 };
  }
  const minutes = Number(d[1] ?? 0) * 1440 + Number(d[2] ?? 0) * 60 + Number(d[3] ?? 0);
  if (minutes === 0) return { error: `duration '${duration}' must be longer than zero`, argument: 1 };
  if (minutes > MAX_SPAN_MINUTES) return { error: `duration '${duration}' is longer than 7d`, argument: 1 };

  try {
    formatterFor(timeZone);
  } catch {
    return { error: `'${timeZone}' is not an IANA time zone`, argument: 2 };
  }
  return {
    spec: {
      minutes: sets[0] as Set<number>,
      hours: sets[1] as Set<number>,
      daysOfMonth: sets[2] as Set<number>,
      months: sets[3] as Set<number>,
      daysOfWeek: dow,
      daysOfMonthRestricted: !(parts[2] as string).startsWith('*'),
      daysOfWeekRestricted: !(parts[4] as string).startsWith('*'),
      durationMinutes: minutes,
      timeZone,
    },
  };
}

/** The zone's offset from UTC at an instant, in ms (local wall time minus UTC). */
function offsetAt(timeZone: string, ms: number): number {
  const parts = formatterFor(timeZone).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes): number =>
    Number(parts.find((p) => p.type === type)?.value ?? NaN);
  const local = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return local - Math.floor(ms / 1000) * 1000;
}

function fires(spec: CronSpanSpec, local: Date): boolean {
  if (!spec.minutes.has(local.getUTCMinutes()) || !spec.hours.has(local.getUTCHours())) return false;
  if (!spec.months.has(local.getUTCMonth() + 1)) return false;
  const dom = spec.daysOfMonth.has(local.getUTCDate());
  const dow = spec.daysOfWeek.has(local.getUTCDay());
  return spec.daysOfMonthRestricted && spec.daysOfWeekRestricted ? dom || dow : dom && dow;
}

const MINUTE = 60_000;
// UTC offsets in use are multiples of 15 minutes, so one offset per quarter hour suffices.
const OFFSET_BUCKET = 15 * MINUTE;

/**
 * True when `nowMs` lies in [fire, fire + duration) for some fire time of the cron, read on the
 * zone's wall clock (a wall time skipped by a DST change never fires; one repeated fires twice).
 */
export function isWithinCronSpan(spec: CronSpanSpec, nowMs: number): boolean {
  const offsets = new Map<number, number>();
  const spanMs = spec.durationMinutes * MINUTE;
  for (let fire = Math.floor(nowMs / MINUTE) * MINUTE; fire + spanMs > nowMs; fire -= MINUTE) {
    const bucket = Math.floor(fire / OFFSET_BUCKET);
    let offset = offsets.get(bucket);
    if (offset === undefined) offsets.set(bucket, (offset = offsetAt(spec.timeZone, bucket * OFFSET_BUCKET)));
    if (fires(spec, new Date(fire + offset))) return true;
  }
  return false;
}
