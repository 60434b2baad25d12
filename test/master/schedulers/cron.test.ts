// The nightly scheduler's cron expressions: parsing (and refusing) each field's forms, and
// the next time after a given one, in local time, across month ends, leap years and DST.
// Files share a process (vitest.config.ts): the time zone goes back after this one.
const tz = process.env.TZ;
process.env.TZ = 'America/New_York';

import { afterAll, describe, expect, it } from 'vitest';
import {
  CronError,
  cronMatches,
  nextCronTime,
  parseCron,
  schedulerConfigProblems,
} from '../../../services/master/schedulers/index.js';
import { configWith } from './lib.js';

afterAll(() => {
  if (tz === undefined) delete process.env.TZ;
  else process.env.TZ = tz;
});

/** Seconds since the epoch of a local (New York) time. */
const at = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) =>
  new Date(y, mo - 1, d, h, mi, s).getTime() / 1000;
/** The local time of seconds since the epoch, as text. */
const local = (t: number | null) => {
  if (t === null) return null;
  const d = new Date(t * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
};
const next = (expr: string, after: number) => local(nextCronTime(parseCron(expr), after));
/** The first `n` times after `after`. */
const times = (expr: string, after: number, n: number) => {
  const s = parseCron(expr);
  const out: (string | null)[] = [];
  let t: number | null = after;
  for (let i = 0; i < n && t !== null; i++) {
    t = nextCronTime(s, t);
    out.push(local(t));
  }
  return out;
};

describe('parseCron', () => {
  it('expands values, lists, ranges, steps and names', () => {
    const s = parseCron('*/15 9-17/4 1,15 jan-MAR mon-fri');
    expect([...s.minutes]).toEqual([0, 15, 30, 45]);
    expect([...s.hours]).toEqual([9, 13, 17]);
    expect([...s.days]).toEqual([1, 15]);
    expect([...s.months]).toEqual([1, 2, 3]);
    expect([...s.weekdays]).toEqual([1, 2, 3, 4, 5]);
    expect(s.daysRestricted && s.weekdaysRestricted).toBe(true);
  });

  it('a step counts from the start of its range; `a/n` runs to the end of the field', () => {
    expect([...parseCron('5-20/10 * * * *').minutes]).toEqual([5, 15]);
    expect([...parseCron('50/4 * * * *').minutes]).toEqual([50, 54, 58]);
    expect([...parseCron('* */7 * * *').hours]).toEqual([0, 7, 14, 21]);
  });

  it('Sunday is 0 or 7 (or sun), Saturday 6', () => {
    expect([...parseCron('0 0 * * 7').weekdays]).toEqual([0]);
    expect([...parseCron('0 0 * * 5-7').weekdays].sort()).toEqual([0, 5, 6]);
    expect([...parseCron('0 0 * * SUN,sat').weekdays].sort()).toEqual([0, 6]);
  });

  it.each([
    ['* * * *', /five fields/],
    ['* * * * * *', /five fields/],
    ['60 * * * *', /minute 60 is out of range 0-59/],
    ['* 24 * * *', /hour 24 is out of range 0-23/],
    ['* * 0 * *', /day of month 0 is out of range 1-31/],
    ['* * * 13 *', /month 13 is out of range 1-12/],
    ['* * * * 8', /day of week 8 is out of range 0-7/],
    ['*/0 * * * *', /step "0" is not a positive number/],
    ['10-5 * * * *', /runs backwards/],
    ['1-2-3 * * * *', /not a value or a range/],
    ['a * * * *', /minute "a" is not a number/],
    ['* * * foo *', /month "foo" is not a number/],
    ['1,,2 * * * *', /not a value/],
    ['-1 * * * *', /not a value or a range/],
  ])('refuses %j', (expr, message) => {
    expect(() => parseCron(expr)).toThrow(CronError);
    expect(() => parseCron(expr)).toThrow(message);
  });

  it('the master refuses a bad expression in its configuration, naming the key', () => {
    const config = configWith(`
  - { type: nightly, name: ok, cron: "0 3 * * *", builders: [b1] }
  - { type: nightly, name: bad, cron: "0 25 * * *", builders: [b1] }`);
    expect(schedulerConfigProblems(config)).toEqual([
      'schedulers[1].cron: 0 25 * * *: hour 25 is out of range 0-23',
    ]);
  });
});

describe('nextCronTime', () => {
  it('is the first whole minute strictly after the time', () => {
    expect(next('* * * * *', at(2024, 5, 10, 12, 0, 0))).toBe('2024-05-10 12:01');
    expect(next('* * * * *', at(2024, 5, 10, 12, 0, 59.9))).toBe('2024-05-10 12:01');
    expect(next('30 12 * * *', at(2024, 5, 10, 12, 30))).toBe('2024-05-11 12:30');
    expect(next('30 12 * * *', at(2024, 5, 10, 12, 29, 30))).toBe('2024-05-10 12:30');
  });

  it('rolls over hours, days, months and years', () => {
    expect(next('0 3 * * *', at(2024, 12, 31, 23, 59))).toBe('2025-01-01 03:00');
    expect(next('15 * * * *', at(2024, 5, 10, 23, 20))).toBe('2024-05-11 00:15');
    expect(times('0 0 31 * *', at(2024, 1, 31, 1), 3)).toEqual([
      '2024-03-31 00:00',
      '2024-05-31 00:00',
      '2024-07-31 00:00',
    ]);
  });

  it('finds 29 February, four (or eight) years on', () => {
    expect(next('0 0 29 2 *', at(2024, 3, 1))).toBe('2028-02-29 00:00');
    expect(next('0 0 29 2 *', at(2096, 3, 1))).toBe('2104-02-29 00:00');
  });

  it('never, for a day that does not exist', () => {
    expect(next('0 0 30 2 *', at(2024, 1, 1))).toBeNull();
    expect(next('0 0 31 4,6,9,11 *', at(2024, 1, 1))).toBeNull();
  });

  it('either day field matches when both are restricted; both must when one is *', () => {
    // 2024-05-01 is a Wednesday. The 15th or any Monday:
    expect(times('0 0 15 * mon', at(2024, 5, 1), 4)).toEqual([
      '2024-05-06 00:00',
      '2024-05-13 00:00',
      '2024-05-15 00:00',
      '2024-05-20 00:00',
    ]);
    // Weekdays only, any date:
    expect(times('0 9 * * 1-5', at(2024, 5, 3, 10), 2)).toEqual(['2024-05-06 09:00', '2024-05-07 09:00']);
  });

  it('skips the hour that does not exist when clocks go forward, and runs once when they go back', () => {
    // New York, 2024-03-10: 02:00 EST becomes 03:00 EDT.
    expect(next('30 2 * * *', at(2024, 3, 9, 12))).toBe('2024-03-11 02:30');
    expect(next('*/20 * * * *', at(2024, 3, 10, 1, 50))).toBe('2024-03-10 03:00');
    // 2024-11-03: 02:00 EDT becomes 01:00 EST; 01:30 happens twice, the hour jump takes the first.
    const first = nextCronTime(parseCron('30 1 * * *'), at(2024, 11, 3, 0, 0));
    expect(local(first)).toBe('2024-11-03 01:30');
    expect(local(nextCronTime(parseCron('30 1 * * *'), first!))).toBe('2024-11-04 01:30');
    // Across the change, each local time once, and time only moves forward.
    expect(times('*/30 * * * *', at(2024, 11, 3, 0, 0), 6)).toEqual([
      '2024-11-03 00:30',
      '2024-11-03 01:00',
      '2024-11-03 01:30',
      '2024-11-03 02:00',
      '2024-11-03 02:30',
      '2024-11-03 03:00',
    ]);
  });

  it('cronMatches agrees with nextCronTime', () => {
    const s = parseCron('*/7 1-3 * * tue');
    const t = nextCronTime(s, at(2024, 5, 1));
    expect(cronMatches(s, new Date(t! * 1000))).toBe(true);
    expect(cronMatches(s, new Date((t! + 60) * 1000))).toBe(false);
    expect(local(t)).toBe('2024-05-07 01:00');
  });
});
