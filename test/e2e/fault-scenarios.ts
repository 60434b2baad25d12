// The fault suite's small forms (issue 15, load/chaos/), shared by the files that run them:
// the same scenarios the runner tortures a cluster with, on a small cluster of real processes
// (APIs, two masters with two workers each, a Redis of its own, the suite's PostgreSQL), two
// builds and a short expiry. Each fault is held until the cluster has noticed it, never for a
// fixed time; the checks are counts: every request done and SUCCESS, every log exact, no
// execution of a request overlapping another, none run to its end and then again, nothing
// left open, no command left running, no 5xx under a light GET load. A file runs several
// scenarios as rounds on one cluster (runFaults), so that a cluster's start is paid once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { stuckTotal } from '../../load/chaos/checker.js';
import {
  type RoundOutcome,
  runScenarios,
  SCENARIOS,
  type ScenarioResult,
} from '../../load/chaos/scenarios.js';
import type { JobShape } from '../../load/chaos/stack.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

// Two builds on four workers: whichever master the fault hits (the one with more builds), the
// other has an idle worker to rerun its builds on at once.
export const BUILDS = 2;
// E = 12 s: a heartbeat every 3 s and a worker silence of 3 s (liveness.ts), short enough for a
// test, long enough that a master slowed down by a loaded machine is not taken for a frozen one.
const EXPIRY_SECONDS = 12;
// 60 batches of 10 lines, 0.2 s apart, about 12 s a build: each is still running when its fault
// comes (a quarter through, 9 s before its end) and for a while after it is noticed. A lost
// build's command that nothing stopped shows either way: it runs beside its rerun (an overlap),
// or, when the rerun waits for an expiry that outlasts the build, it runs to its end first
// (endedThenRerun, load/chaos/records.ts). Each round lasts about a build (one that loses a
// build: a quarter, the expiry, then a build), and the cluster's processes, the GET load and
// PostgreSQL work all along: 40 s builds until 2026-11-28, then 20 s, now 12 s.
const JOB: JobShape = { lines: 600, batch: 10, pause: 0.2 };
/**
 * 20 s builds (100 batches), for a scenario whose builds must still be running well after their
 * quarter: master-term's 5 s drain must end before the builds do (or they finish in it and none
 * runs again), and redis-empty-master-kill kills its master only once Redis is back and the
 * masters are ready again, which on a loaded machine can take longer than a 12 s build's last 9 s.
 */
export const LONG_JOB: JobShape = { lines: 1000, batch: 10, pause: 0.2 };

let dir: string;
const databases: TestDatabase[] = [];

/** Registers the file's hooks: a state folder for its scenarios, their databases dropped after. */
export function faultSuite(): void {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-faults-'));
  });
  afterAll(async () => {
    await Promise.all(databases.map((d) => d.drop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
}

export interface FaultsOptions {
  /** API processes (1). */
  apis?: number;
  /**
   * A PostgreSQL server of the cluster's own (load/chaos/stack.ts), which its scenarios may
   * stop, instead of a database on the suite's server.
   */
  ownPostgres?: boolean;
  /** The masters' environment (a later round's scenario may ask for it: runScenarios). */
  masterEnv?: Record<string, string>;
  /**
   * master_expiry_seconds (default 12): an outage the builds must ride out needs an outage
   * limit (the expiry less 3 s) well past what a loaded machine takes to notice it and to
   * start the store again.
   */
  expirySeconds?: number;
  /** The builds' shape (JOB, about 12 s; LONG_JOB for a fault that needs them longer). */
  job?: JobShape;
}

/**
 * Runs scenarios of load/chaos one after the other on one small cluster (runScenarios): a
 * cluster's start and its builds' first quarter are paid once per file, not once per fault.
 */
export async function runFaults(names: readonly string[], o: FaultsOptions = {}): Promise<ScenarioResult> {
  const scs = names.map((name) => {
    const sc = SCENARIOS.find((s) => s.name === name);
    if (!sc) throw new Error(`no scenario ${name}`);
    return sc;
  });
  let databaseUrl: string | undefined;
  if (!o.ownPostgres) {
    const db = await createDatabase('migrated');
    databases.push(db);
    databaseUrl = db.url;
  }
  // What the scenario saw, for the message of a test that fails.
  const seen: string[] = [];
  const fail = (err: Error) => {
    err.message += `\n${seen.join('\n')}`;
    throw err;
  };
  return runScenarios(scs, {
    dir: join(dir, names.join('+')),
    ...(databaseUrl ? { databaseUrl } : {}),
    builds: BUILDS,
    job: o.job ?? JOB,
    expirySeconds: o.expirySeconds ?? EXPIRY_SECONDS,
    ...(o.masterEnv ? { masterEnv: o.masterEnv } : {}),
    load: 5,
    apis: o.apis ?? 1,
    masters: 2,
    workers: 4,
    maxBuilds: 1,
    // Every wait of the scenario within the test's limit.
    settleSeconds: 80,
    fixed: false,
    log: (line) => seen.push(line),
  }).catch(fail);
}

/** What must hold after every fault (`builds`: how many the scenario forced). */
export function expectWhole(r: ScenarioResult, builds = BUILDS): void {
  const c = r.check;
  const why = JSON.stringify({
    timeline: r.timeline,
    results: c.results,
    extra: r.extra,
    ws: r.ws,
    jobs: r.jobs,
  });
  expect(c.requests, why).toBe(builds);
  expect(c.incomplete, why).toBe(0);
  expect(c.notSuccess, why).toEqual([]);
  expect(c.badLogs, why).toEqual([]);
  expect(c.lostLines, why).toBe(0);
  expect(c.duplicates, why).toEqual([]);
  expect(c.endedThenRerun, why).toEqual([]);
  expect(c.stuck, why).toEqual({ builds: 0, steps: 0, logs: 0, claims: 0 });
  expect(stuckTotal(c), why).toBe(0);
  expect(c.orphans, why).toBe(0);
  expect(r.traffic.server, why).toBe(0);
  // Every finished log had its compress-log job run, also those whose build's master was gone
  // (finished by the expiry's or a restarted master's housekeeping).
  expect(r.jobs, why).not.toBeNull();
  expect(r.jobs!.runs, why).toBeGreaterThanOrEqual(r.jobs!.logs);
}

/** Round `name` of a result. */
export function round(r: ScenarioResult, name: string): RoundOutcome {
  const o = r.rounds.find((x) => x.scenario === name);
  if (!o) throw new Error(`no round ${name} in ${r.scenario}`);
  return o;
}

/** A round whose fault no build may notice: each of its requests ran once. */
export function expectUntouched(r: ScenarioResult, name: string): void {
  expect(round(r, name), JSON.stringify(r.rounds)).toMatchObject({ executions: BUILDS, rerun: 0 });
}

/** A round whose fault cost a build: at least one of its requests ran again (never beside itself). */
export function expectRerun(r: ScenarioResult, name: string): void {
  const o = round(r, name);
  expect(o.rerun, JSON.stringify(r.rounds)).toBeGreaterThanOrEqual(1);
  expect(o.executions, JSON.stringify(r.rounds)).toBe(BUILDS + o.rerun);
}

/** An API's fault, on two APIs: every GET was answered, by the API left once one was gone. */
export function expectGetsServed(r: ScenarioResult): void {
  expect(r.traffic.ok).toBeGreaterThan(0);
  expect(r.traffic.unserved).toBe(0);
  expect(r.traffic.client).toBe(0);
}
