// Five-field cron expressions for the nightly scheduler: minute hour day-of-month month
// day-of-week, each `*`, a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from a to the
// field's end), or a comma-separated list of those; months and week days also by their
// three-letter English names; Sunday is 0 or 7. Times are the master's local time, as
// Buildbot's Nightly reads them.
//
// Buildbot facts (buildbot/util/croniter.py, the croniter copy Nightly uses):
// - when both day fields are restricted (neither is exactly `*`), a day matches if either
//   does (`0 0 1 * 1`: the 1st of each month and every Monday); otherwise both must;
// - the next time is the first whole minute strictly after the given time.
// Where we part from that copy: a step counts from the start of its range (`5-20/10` is 5
// and 15, as in every cron), and `sat` is 6 (the copy maps it to 0). Expressions are
// checked when the master starts: a value out of its field's range is refused instead of
// failing when the scheduler first runs.

const FIELDS = [
  { name: 'minute', min: 0, max: 59, names: [] as string[] },
  { name: 'hour', min: 0, max: 23, names: [] as string[] },
  { name: 'day of month', min: 1, max: 31, names: [] as string[] },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { name: 'day of week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
] as const;

export class CronError extends Error {
  override name = 'CronError';
}

export interface CronSchedule {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 = Sunday ... 6 = Saturday (7 is folded into 0). */
  readonly weekdays: ReadonlySet<number>;
  /** Whether each day field is restricted (not exactly `*`), for the either-day rule. */
  readonly daysRestricted: boolean;
  readonly weekdaysRestricted: boolean;
}

function value(field: (typeof FIELDS)[number], text: string, expr: string): number {
  const lower = text.toLowerCase();
  const named = (field.names as readonly string[]).indexOf(lower);
  if (named >= 0) return field.names.length === 12 ? named + 1 : named;
  if (!/^\d+$/.test(text)) throw new CronError(`${expr}: ${field.name} "${text}" is not a number`);
  const n = Number(text);
  if (n < field.min || n > field.max)
    throw new CronError(`${expr}: ${field.name} ${n} is out of range ${field.min}-${field.max}`);
  return n;
}

function parseField(field: (typeof FIELDS)[number], text: string, expr: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^([^/]+)(?:\/(.*))?$/.exec(part);
    if (!m) throw new CronError(`${expr}: ${field.name} "${part}" is not a value, range or step`);
    const [, range, stepText] = m;
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0)
        throw new CronError(`${expr}: ${field.name} step "${stepText}" is not a positive number`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = field.min;
      hi = field.max;
    } else {
      const bounds = range!.split('-');
      if (bounds.length > 2 || bounds.some((b) => b === ''))
        throw new CronError(`${expr}: ${field.name} "${range}" is not a value or a range`);
      lo = value(field, bounds[0]!, expr);
      // `a/n` runs from a to the end of the field.
      hi = bounds.length === 2 ? value(field, bounds[1]!, expr) : stepText !== undefined ? field.max : lo;
      if (lo > hi) throw new CronError(`${expr}: ${field.name} range ${range} runs backwards`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

export function parseCron(expr: string): CronSchedule {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === '')
    throw new CronError(`${expr}: expected five fields (minute hour day-of-month month day-of-week)`);
  const [minutes, hours, days, months, weekdays] = FIELDS.map((f, i) => parseField(f, parts[i]!, expr));
  if (weekdays!.delete(7)) weekdays!.add(0);
  return {
    minutes: minutes!,
    hours: hours!,
    days: days!,
    months: months!,
    weekdays: weekdays!,
    daysRestricted: parts[2] !== '*',
    weekdaysRestricted: parts[4] !== '*',
  };
}

function dayMatches(s: CronSchedule, d: Date): boolean {
  const byDate = s.days.has(d.getDate());
  const byWeekday = s.weekdays.has(d.getDay());
  if (s.daysRestricted && s.weekdaysRestricted) return byDate || byWeekday;
  return byDate && byWeekday;
}

/** Whether the minute holding `d` (local time) is one of the schedule's. */
export function cronMatches(s: CronSchedule, d: Date): boolean {
  return (
    s.months.has(d.getMonth() + 1) &&
    dayMatches(s, d) &&
    s.hours.has(d.getHours()) &&
    s.minutes.has(d.getMinutes())
  );
}

// A schedule that matches nothing in this many years never will (29 February needs eight).
const SEARCH_YEARS = 9;

/** A local wall-clock minute as one number that grows with it. */
const wallMinute = (d: Date) =>
  (((d.getFullYear() * 12 + d.getMonth()) * 31 + d.getDate()) * 24 + d.getHours()) * 60 + d.getMinutes();

/**
 * The first whole minute strictly after `after` (seconds since the epoch) that the schedule
 * names, in seconds since the epoch; null if it names none (`0 0 31 2 *`). A local time that
 * happens twice (when clocks go back) is the schedule's once, the first time.
 */
export function nextCronTime(s: CronSchedule, after: number): number | null {
  const from = wallMinute(new Date(Math.floor(after) * 1000));
  let d = new Date((Math.floor(after / 60) + 1) * 60_000);
  const lastYear = d.getFullYear() + SEARCH_YEARS;
  while (d.getFullYear() <= lastYear) {
    let next: Date;
    if (!s.months.has(d.getMonth() + 1)) next = new Date(d.getFullYear(), d.getMonth() + 1, 1);
    else if (!dayMatches(s, d)) next = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1);
    else if (!s.hours.has(d.getHours()))
      next = new Date(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours() + 1);
    else if (!s.minutes.has(d.getMinutes()) || wallMinute(d) <= from) next = new Date(d.getTime() + 60_000);
    else return d.getTime() / 1000;
    // Local midnights and hours can repeat when clocks go back: always move forward.
    d = next.getTime() > d.getTime() ? next : new Date(d.getTime() + 60_000);
  }
  return null;
}
