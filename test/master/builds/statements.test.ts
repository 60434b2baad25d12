// The statements a build sends to PostgreSQL, recorded on the master's own pool
// (helpers/statement-log.ts). Issue 35's fleet found PostgreSQL spending more CPU on a build
// than the masters (load/results/fleet.md, 2026-11-28 22:17-22:57), much of it on transaction
// bookkeeping (BEGIN, the fence's read and record, COMMIT) and on events reading back what was
// just written: the first test keeps a short build's count from creeping back. The second
// keeps load/fleet/pgbench-start.sql, PostgreSQL's own limit for the fleet's builds started a
// second, the statements a start really makes (load/fleet/pgbench-start.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  asPgbenchSends,
  REGENERATE,
  type Role,
  readScript,
  SCRIPT_FILE,
  SCRIPT_PATH,
  writeScript,
} from '../../../load/fleet/pgbench-start.js';
import { writePending } from '../../../load/fleet/queue.js';
import { sql } from '../../../services/core/db/pool.js';
import { recording, type Sent, type StatementLog } from '../../helpers/statement-log.js';
import { eventually } from '../../helpers/wait.js';
import { type InProcessMaster, ScriptedWorker, Stage } from '../in-process.js';

// `short` for the count; `fleet-0000` and its worker as load/fleet/config.ts writes the
// fleet's (a one-step `true` build, a worker of one slot), for the start.
const CONFIG = `
log_compression: none
workers:
  - { name: w1, password: x }
  - { name: f0000, password: fleet, max_builds: 1 }
builders:
  - name: short
    workers: [w1]
    steps:
      - { type: shell, name: one, command: "echo ok" }
  - { name: fleet-0000, workers: [f0000], steps: [{ type: shell, name: ok, command: "true" }] }
`;

let stage: Stage;
let m: InProcessMaster;
let log: StatementLog;
/** How many statements the master had sent when each command reached f0000. */
const fleetCommandsAt: number[] = [];
beforeAll(async () => {
  stage = await Stage.open();
  // Each table's ids in a range of its own, so that a value recorded names one id only
  // (pgbench-start.ts tells a start's ids apart by their values).
  await stage.db.pool.query(sql`SELECT
    setval('masters_id_seq', 1000), setval('workers_id_seq', 2000), setval('builders_id_seq', 3000),
    setval('buildsets_id_seq', 4000), setval('buildrequests_id_seq', 5000), setval('builds_id_seq', 6000),
    setval('steps_id_seq', 7000), setval('logs_id_seq', 8000), setval('sourcestamps_id_seq', 9000)`);
  log = recording(stage.db.pool);
  // A poll slower than the build: the count is the build's, not the idle passes'.
  m = await stage.master('statements', CONFIG, { db: log.pool, timing: { distributorPollMs: 60_000 } });
  m.workers.connect(new ScriptedWorker('w1'));
  m.workers.connect(
    new ScriptedWorker('f0000', async () => {
      fleetCommandsAt.push(log.sent.length);
      return {};
    }),
  );
});
afterAll(() => stage?.close());

async function finished(brid: number): Promise<void> {
  await eventually(
    () => stage.db.pool.query(sql`SELECT complete FROM buildrequests WHERE id = ${brid}`),
    (rows) => rows[0]?.complete === 1,
  );
  await m.master.runner.whenIdle();
}

async function oneBuild(): Promise<void> {
  const { brid } = await stage.request('short');
  m.master.distributor.kick();
  await finished(brid);
}

it('a build of one short step makes at most 59 statements from its claim to its end', async () => {
  await oneBuild(); // the master's first build: registration and first looks out of the way
  const before = log.sent.length;
  await oneBuild();
  const sent = log.sent.length - before;
  // 111 before 2026-11-28 22:50 (the properties' own fenced transaction, a step's start in
  // another, and an entity read after every write of a step or a build), 91 after, 92 once
  // the row's transaction checked the claim; 78 on 2026-11-29 (a log's add, append and finish
  // in two statements, two and one instead of four, four and three; the step's `running`
  // state string in its log's transaction and the log's finish in the step's end: two fenced
  // transactions fewer, step-writes.ts); 74 with each step written started and ended in one
  // UPDATE (newStep's started, endStep); 73 with the build's state string and finish in one
  // (endBuild); 69 with worker_preparation written and ended in one transaction when the
  // builder has no locks to wait for; 63 with the first properties' facts read and written in
  // one statement each and the claim checked in the row's INSERT; 59 with worker_preparation
  // carried by the first step's row's transaction; then, with the build's row not locked again
  // by newStep in a fenced transaction whose fence holds it (core/data/build-lock.ts), and a
  // write's number recorded by its fence's statement, no record after a write that answers
  // nothing (buildWriteFence), 57; 55 with a step's number and name chosen by its INSERT
  // (core/data/steps.ts' newStep). The margin is the one idle look for work that the
  // build's end may or may not come before.
  expect(sent).toBeLessThanOrEqual(59);
  expect(sent).toBeGreaterThan(30);
});

/**
 * The statements of one start, from its claim to its first command: every transaction that
 * names the request, its build set, or the build's, its steps' or its log's id, and every
 * statement outside one that does. The master's other work (the candidates' read before
 * the claim, its heartbeat, renewals, schedulers) names none of them, so it stays out
 * whenever it runs; a statement of the start that named none would be left out too (none
 * did on 2026-11-29: the window held nothing else).
 */
function startStatements(window: readonly Sent[], ids: Readonly<Record<Role, number>>): Sent[] {
  const { builderid: _b, masterid: _m, workerid: _w, ...own } = ids;
  const mine = new Set(Object.values(own));
  const names = (s: Sent) =>
    s.values.some((v) => (Array.isArray(v) ? v.some((x) => mine.has(x)) : mine.has(v as number)));
  const txs = new Set(window.filter((s) => s.tx !== null && names(s)).map((s) => s.tx));
  return window.filter((s) => (s.tx === null ? names(s) : txs.has(s.tx)));
}

it(`${SCRIPT_PATH} is the statements a start of the fleet's shape makes, claim to first command`, async () => {
  await oneBuild(); // as in phase S, the master has started builds before
  const [{ id: ssid }] = await stage.db.pool.query(sql`
    INSERT INTO sourcestamps (ss_hash, branch, revision, repository, codebase, project, created_at)
    VALUES (md5('fleet'), '', '', '', '', '', 0) RETURNING id`);
  const from = log.sent.length;
  const nowS = Math.floor(Date.now() / 1000);
  // The request as phase S writes its queue (load/fleet/queue.ts), then a look for work.
  await writePending(stage.db.pool, ssid, 1);
  const [{ id: brid, buildsetid, builderid }] = await stage.db.pool.query(
    sql`SELECT id, buildsetid, builderid FROM buildrequests ORDER BY id DESC LIMIT 1`,
  );
  m.master.distributor.kick();
  await eventually(
    async () => fleetCommandsAt.length,
    (n) => n === 1,
  );
  await finished(brid);
  const [ids] = await stage.db.pool.query(sql`
    SELECT (SELECT id FROM masters WHERE name = 'statements') AS masterid,
      (SELECT id FROM workers WHERE name = 'f0000') AS workerid, b.id AS buildid,
      (SELECT id FROM steps WHERE buildid = b.id AND number = 0) AS step0,
      (SELECT id FROM steps WHERE buildid = b.id AND number = 1) AS step1,
      (SELECT l.id FROM logs l JOIN steps s ON s.id = l.stepid WHERE s.buildid = b.id) AS logid
    FROM builds b WHERE b.buildrequestid = ${brid}`);
  const roles = { brid, buildsetid, builderid, ...ids } as Record<Role, number>;
  expect(Object.values(roles).every(Number.isInteger), `every id found: ${JSON.stringify(roles)}`).toBe(true);
  const start = startStatements(log.sent.slice(from, fleetCommandsAt[0]), roles);
  const claim = start.find((s) => /INSERT INTO buildrequest_claims/.test(s.text));
  expect(start[0], 'the window opens with the claim').toMatchObject({ text: 'BEGIN', tx: claim?.tx });
  expect(start.map((s) => s.text)).not.toContain('ROLLBACK');

  if (process.env.PGBENCH_START_WRITE === '1') writeFileSync(SCRIPT_FILE, writeScript(start, roles, nowS));
  const script = readScript(readFileSync(SCRIPT_FILE, 'utf8')).start;
  const masters = start.map(asPgbenchSends);
  const at = masters.findIndex((s, i) => s !== script[i]);
  const i = at < 0 ? masters.length : at;
  const differs =
    at < 0 && script.length === masters.length
      ? ''
      : `statement ${i + 1} differs: the masters send\n  ${masters[i] ?? '(nothing more)'}\n` +
        `and ${SCRIPT_PATH} has\n  ${script[i] ?? '(nothing more)'}\n` +
        `If the masters' change is meant, regenerate the script (then rerun load/fleet/pgbench.sh):\n  ${REGENERATE}`;
  expect(differs).toBe('');
});
