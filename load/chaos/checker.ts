// The invariants a fault must not break, checked once the cluster has settled:
// - every request completed, and completed SUCCESS (a fault of the cluster costs no build);
// - every finished build's log is exact: a SUCCESS log holds "line 1" ... "line N" once each,
//   in order; any other finished log is a clean prefix of that ("lost lines" counts what is
//   missing from the first and out of place in either);
// - nothing stays open: no build, step or log unfinished, no request claimed or incomplete;
// - no command of one request ran on two workers at the same moment (the commands' own
//   records, records.ts), none ran to its end and then ran again (a lost build's command must
//   be stopped, not left to finish), and no command still runs once everything has finished.
import type pg from 'pg';
import { endedThenRerun, type Overlap, overlaps, readExecutions, runningExecutions } from './records.js';

export interface Check {
  requests: number;
  incomplete: number;
  /** Requests complete with anything but SUCCESS. */
  notSuccess: { brid: number; results: number }[];
  builds: number;
  /** Builds per results code. */
  results: Record<string, number>;
  lostLines: number;
  /** The builds whose log was not what it should be, and how. */
  badLogs: { buildid: number; results: number; problem: string }[];
  duplicates: Overlap[];
  /** Requests whose command ran to its end and then ran again (records.ts, endedThenRerun). */
  endedThenRerun: string[];
  stuck: {
    builds: number;
    steps: number;
    logs: number;
    claims: number;
  };
  /** Commands still running after everything finished. */
  orphans: number;
  executions: number;
}

export interface CheckTarget {
  query(text: string, values?: unknown[]): Promise<pg.QueryResultRow[]>;
  /** An API's /api/v2 base that answers now. */
  api(): Promise<string>;
  record: string;
  lines: number;
}

/** The numbers of the "line N" lines of a log, in order. */
function numbered(raw: string): number[] {
  const out: number[] = [];
  for (const m of raw.matchAll(/^line (\d+)$/gm)) out.push(Number(m[1]));
  return out;
}

/** What is wrong with a log's numbers: [lost lines, problem] (0 and '' when it is right). */
export function judgeLog(nums: readonly number[], lines: number, complete: boolean): [number, string] {
  let prefix = 0;
  while (prefix < nums.length && nums[prefix] === prefix + 1) prefix++;
  const misplaced = nums.length - prefix;
  if (complete) {
    const lost = lines - prefix + misplaced;
    return lost === 0 ? [0, ''] : [lost, `${prefix} of ${lines} lines in order, ${misplaced} misplaced`];
  }
  return misplaced === 0
    ? [0, '']
    : [misplaced, `not a clean prefix: ${misplaced} lines after line ${prefix}`];
}

export async function check(t: CheckTarget): Promise<Check> {
  const requests = await t.query(`
    SELECT br.id, br.complete, br.results FROM buildrequests br ORDER BY br.id`);
  const builds = await t.query(`
    SELECT b.id, b.results, b.complete_at, l.id AS logid FROM builds b
    LEFT JOIN steps s ON s.buildid = b.id AND s.name = 'print'
    LEFT JOIN logs l ON l.stepid = s.id AND l.slug = 'stdio'
    ORDER BY b.id`);
  const results: Record<string, number> = {};
  const badLogs: Check['badLogs'] = [];
  let lostLines = 0;
  for (const b of builds) {
    const key = b.results === null ? 'open' : String(b.results);
    results[key] = (results[key] ?? 0) + 1;
    if (b.complete_at === null || b.logid === null) continue;
    const res = await fetch(`${await t.api()}/logs/${b.logid}/raw`);
    if (!res.ok) throw new Error(`log ${b.logid}: ${res.status}`);
    const [lost, problem] = judgeLog(numbered(await res.text()), t.lines, b.results === 0);
    if (lost) {
      lostLines += lost;
      badLogs.push({ buildid: b.id, results: b.results, problem });
    }
  }
  const [stuck] = await t.query(`
    SELECT (SELECT count(*)::int FROM builds WHERE complete_at IS NULL) AS builds,
           (SELECT count(*)::int FROM steps WHERE results IS NULL) AS steps,
           (SELECT count(*)::int FROM logs WHERE complete = 0) AS logs,
           (SELECT count(*)::int FROM buildrequest_claims c JOIN buildrequests br ON br.id = c.brid
             WHERE br.complete = 0) AS claims`);
  const executions = readExecutions(t.record);
  return {
    requests: requests.length,
    incomplete: requests.filter((r) => !r.complete).length,
    notSuccess: requests
      .filter((r) => r.complete && r.results !== 0)
      .map((r) => ({ brid: r.id, results: r.results })),
    builds: builds.length,
    results,
    lostLines,
    badLogs,
    duplicates: overlaps(executions),
    endedThenRerun: endedThenRerun(executions),
    stuck: stuck as Check['stuck'],
    orphans: runningExecutions(t.record).length,
    executions: executions.length,
  };
}

/** Stuck things, summed: what the table's "stuck builds" column shows. */
export function stuckTotal(c: Check): number {
  return c.stuck.builds + c.stuck.steps + c.stuck.logs + c.stuck.claims + c.incomplete;
}
