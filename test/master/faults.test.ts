// A build request never runs twice at once, and the cluster's faults cost no build (issue 15),
// in-process against a real database and scripted workers:
// - a master the cluster expired while it was away writes nothing over what the cluster
//   decided meanwhile, and its command is killed at once;
// - a master started again under the same name cleans up after its previous life first;
// - a database outage shorter than the limit costs nothing: the output waits, the build
//   goes on; past the limit the build's command is killed and the build ends RETRY (never
//   EXCEPTION) once the database is back, its interrupted step and log with it, and its
//   request runs again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import {
  addLog,
  claimBuildRequests,
  completeBuildRequests,
  expireMasters,
  findBuilderId,
  masterActive,
  newBuild,
  newStep,
  startStep,
  transact,
} from '../../services/core/data/index.js';
import { type ConnectionPool, createPool, sql } from '../../services/core/db/pool.js';
import { Results } from '../../services/core/results.js';
import { Interruption } from '../../services/master/builds/interruption.js';
import { ClaimLost } from '../../services/master/claims.js';
import { masterYaml } from '../helpers/master-config.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';
import { waitFor } from '../helpers/wait.js';
import { type InProcessMaster, interrupted, type Script, ScriptedWorker, Stage } from './in-process.js';

// E = 20 s: a heartbeat every 5 s, and builds ride out an outage of up to 17 s (liveness.ts),
// long enough that a master slowed down by a loaded machine keeps its lease.
const CONFIG = `
log_compression: none
master_expiry_seconds: 20
worker_silence_seconds: 0.4
workers:
  - { name: w1, password: x, max_builds: 1 }
  - { name: w2, password: x, max_builds: 1 }
builders:
  - name: counting
    workers: [w1, w2]
    steps:
      - { type: shell, name: count, command: "count" }
`;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
}, 60_000);
afterAll(() => stage?.close());

/** A command that prints `line 1` ... `line N` (each stored before the next), or until killed. */
function counter(lines = Number.POSITIVE_INFINITY) {
  const seen = { written: 0, aborts: [] as unknown[], failedWrites: 0 };
  const script: Script = async (cmd) => {
    for (let n = 1; n <= lines; n++) {
      if (cmd.signal.aborted) break;
      try {
        await cmd.write('o', `line ${n}\n`);
        seen.written = n;
      } catch {
        // The master could not take it: a real worker's command runs on until it is killed.
        seen.failedWrites++;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    if (lines === Number.POSITIVE_INFINITY || cmd.signal.aborted || seen.failedWrites) {
      const end = await interrupted(cmd.signal);
      seen.aborts.push(cmd.signal.reason);
      return end;
    }
    return { rc: 0 };
  };
  return { script, seen };
}

const quick: Script = async (cmd) => {
  await cmd.write('o', 'line 1\n');
  return { rc: 0 };
};

interface BuildRow {
  id: number;
  results: number | null;
  masterid: number;
  state_string: string;
}

const buildsOf = (brid: number): Promise<BuildRow[]> =>
  stage.db.pool.query(
    sql`SELECT id, results, masterid, state_string FROM builds WHERE buildrequestid = ${brid} ORDER BY id`,
  );

async function requestRow(brid: number) {
  const [r] = await stage.db.pool.query(sql`SELECT complete, results FROM buildrequests WHERE id = ${brid}`);
  return r as { complete: number; results: number };
}

/** The stored lines of a build's `count` step, as its log holds them. */
async function countLines(buildid: number): Promise<string[]> {
  const rows = await stage.db.pool.query(sql`
    SELECT c.content FROM logchunks c JOIN logs l ON l.id = c.logid JOIN steps s ON s.id = l.stepid
    WHERE s.buildid = ${buildid} AND s.name = 'count' ORDER BY c.first_line`);
  return rows
    .flatMap((r) => r.content.toString().split('\n'))
    .filter((l: string) => l.startsWith('o'))
    .map((l: string) => l.slice(1));
}

/** How many times a master's build writes were tried again while the database was away. */
async function writeRetries(m: InProcessMaster): Promise<number> {
  const text = (await m.master.metrics()).body;
  return Number(/^flotilla_build_write_retries_total (\d+)/m.exec(text)?.[1] ?? 0);
}

/** A build's steps still running, and how many of its logs are still open. */
async function openParts(buildid: number): Promise<{ steps: string[]; logs: number }> {
  const steps = await stage.db.pool.query(
    sql`SELECT name FROM steps WHERE buildid = ${buildid} AND (results IS NULL OR complete_at IS NULL) ORDER BY number`,
  );
  const [logs] = await stage.db.pool.query(sql`
    SELECT count(*)::int AS n FROM logs l JOIN steps s ON s.id = l.stepid
    WHERE s.buildid = ${buildid} AND l.complete = 0`);
  return { steps: steps.map((s: { name: string }) => s.name), logs: logs.n };
}

/** A build's steps, each as [name, results]. */
async function stepResults(buildid: number): Promise<[string, number | null][]> {
  const rows = await stage.db.pool.query(
    sql`SELECT name, results FROM steps WHERE buildid = ${buildid} ORDER BY number`,
  );
  return rows.map((r: { name: string; results: number | null }) => [r.name, r.results]);
}

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

describe('a master expired while it was away', () => {
  it('writes nothing over what the cluster decided, and its command is killed at once', async () => {
    const m1 = await stage.master('fence-1', CONFIG, { timing: { claimRenewMs: 200 } });
    let m2: InProcessMaster | undefined;
    try {
      // Its worker's first command counts until killed; any later one ends at once.
      const first = counter();
      let given = 0;
      m1.workers.connect(new ScriptedWorker('w1', (cmd) => (given++ === 0 ? first.script(cmd) : quick(cmd))));
      const { brid } = await stage.request('counting');
      await waitFor('the first lines to be stored', () => first.seen.written >= 5);
      const [build] = await buildsOf(brid);

      // Behind its back, the cluster decides it is gone: expired, its build RETRY, its claim released.
      await transact(stage.ctx, async (tx) => {
        await tx.q.query(sql`UPDATE masters SET last_active = last_active - 1000 WHERE name = 'fence-1'`);
        await expireMasters(tx, 8, null);
      });
      const linesAtExpiry = (await countLines(build!.id)).length;
      m2 = await stage.master('fence-2', CONFIG);
      m2.workers.connect(new ScriptedWorker('w2', quick));

      await waitFor('the request to complete', async () => (await requestRow(brid)).complete === 1);
      await waitFor('the first command to be killed', () => first.seen.aborts.length === 1);
      // Killed at once, not interrupted with the grace a build's stop gets.
      const reason = first.seen.aborts[0];
      expect(reason).toBeInstanceOf(Interruption);
      expect((reason as Interruption).immediate).toBe(true);
      expect(await requestRow(brid)).toEqual({ complete: 1, results: Results.SUCCESS });
      const builds = await buildsOf(brid);
      // The first build is as the expiry's housekeeping left it; nothing of it was written since.
      expect(builds[0]).toMatchObject({
        id: build!.id,
        results: Results.RETRY,
        state_string: 'retry (master fence-1 was lost)',
      });
      expect((await countLines(build!.id)).length).toBe(linesAtExpiry);
      expect(builds.slice(1).map((b) => b.results)).toEqual([Results.SUCCESS]);
    } finally {
      await m1.stop();
      await m2?.stop();
    }
  });
});

describe('a build handed out just before its master lost the claim', () => {
  it('writes no row at all: the claim is checked in the row and properties transaction', async () => {
    const m = await stage.master('fence-start', CONFIG);
    try {
      // No worker of its own: nothing but this test hands it the request.
      const { brid, bsid } = await stage.request('counting');
      const { builderid, other } = await transact(stage.ctx, async (tx) => {
        const other = await masterActive(tx, 'fence-start-other');
        expect(await claimBuildRequests(tx, [brid], other)).toBe(true);
        return { builderid: (await findBuilderId(tx, 'counting', false))!, other };
      });
      const builder = parseMasterConfig(CONFIG).builders[0]!;
      // Before, the row and its properties were written first, and the build ended RETRY at
      // its next write, its row left open over the other master's.
      await expect(
        m.master.runner.run({ brid, bsid, builderid, builder }, new ScriptedWorker('w1', quick)),
      ).rejects.toBeInstanceOf(ClaimLost);
      expect(await buildsOf(brid)).toEqual([]);
      // The request ends here: left claimed by a master that never beats, a later test's
      // master expired that master and ran the request, and its worker's first command, meant
      // for that test's own request, went to it (a CI run of "past the limit" below).
      await transact(stage.ctx, (tx) => completeBuildRequests(tx, [brid], Results.CANCELLED, other));
    } finally {
      await m.stop();
    }
  });
});

describe('a request run again by the master whose earlier build of it is still open', () => {
  it('gets a build of its own: the earlier one is not taken for a row its start committed', async () => {
    const m = await stage.master('adopt-not', CONFIG);
    try {
      const { brid, bsid } = await stage.request('counting');
      const masterid = m.master.masterid;
      // The earlier build of the request on this master: ended RETRY in memory, its end not
      // written yet (the database was away), and the request already claimed again.
      const { builderid, earlier } = await transact(stage.ctx, async (tx) => {
        expect(await claimBuildRequests(tx, [brid], masterid)).toBe(true);
        const builderid = (await findBuilderId(tx, 'counting', false))!;
        const b = await newBuild(tx, { builderid, buildrequestid: brid, workerid: null, masterid });
        return { builderid, earlier: b.buildid };
      });
      const builder = parseMasterConfig(CONFIG).builders[0]!;
      // Before, the start's look for a row an earlier attempt committed found this one and ran
      // the build in it: one build of the two was lost (a CI run of "past the limit" above).
      expect(
        await m.master.runner.run({ brid, bsid, builderid, builder }, new ScriptedWorker('w1', quick)),
      ).toBe(Results.SUCCESS);
      const builds = await buildsOf(brid);
      expect(builds.map((b) => [b.id === earlier, b.results])).toEqual([
        [true, null],
        [false, Results.SUCCESS],
      ]);
    } finally {
      await m.stop();
    }
  });
});

describe('a master started again under the same name', () => {
  it('first ends what its previous life left open, then runs the request again', async () => {
    const { brid } = await stage.request('counting');
    // A previous life that died without a word: active, a build with an open step and log.
    const old = await transact(stage.ctx, async (tx) => {
      const masterid = await masterActive(tx, 'again-1');
      const builderid = (await findBuilderId(tx, 'counting', false))!;
      expect(await claimBuildRequests(tx, [brid], masterid)).toBe(true);
      const b = await newBuild(tx, { builderid, buildrequestid: brid, workerid: null, masterid });
      const s = await newStep(tx, b.buildid, 'count');
      await startStep(tx, s.stepid);
      await addLog(tx, s.stepid, 'stdio', 's');
      return { masterid, buildid: b.buildid };
    });
    // Silent for long enough that its workers have killed its commands (liveness.ts).
    await stage.db.pool.query(
      sql`UPDATE masters SET last_active = last_active - 100 WHERE id = ${old.masterid}`,
    );

    const m = await stage.master('again-1', CONFIG);
    try {
      expect(m.master.masterid).toBe(old.masterid);
      const [b] = await stage.db.pool.query(
        sql`SELECT results, complete_at IS NOT NULL AS done FROM builds WHERE id = ${old.buildid}`,
      );
      expect(b).toEqual({ results: Results.RETRY, done: true });
      const open = await stage.db.pool.query(sql`
      SELECT (SELECT count(*)::int FROM steps WHERE buildid = ${old.buildid} AND results IS NULL) AS steps,
             (SELECT count(*)::int FROM logs l JOIN steps s ON s.id = l.stepid
               WHERE s.buildid = ${old.buildid} AND l.complete = 0) AS logs`);
      expect(open).toEqual([{ steps: 0, logs: 0 }]);

      m.workers.connect(new ScriptedWorker('w1', quick));
      await waitFor('the request to complete', async () => (await requestRow(brid)).complete === 1);
      expect((await buildsOf(brid)).map((x) => x.results)).toEqual([Results.RETRY, Results.SUCCESS]);
    } finally {
      await m.stop();
    }
  });
});

describe('the database away', () => {
  let proxy: PgProxy;
  let pool: ConnectionPool;
  beforeAll(async () => {
    proxy = await startPgProxy(stage.db.url);
    pool = createPool(proxy.url, { poolSize: 6 });
  });
  afterAll(async () => {
    await pool?.dispose();
    await proxy?.close();
  });

  it('for less than the limit costs nothing: the output waits, the log is exact', async () => {
    // The outage below lasts until the build's writes have been retried a few times, which
    // must not reach the outage limit (17 s).
    const m = await stage.master('outage-1', CONFIG, { db: pool });
    const retries = () => writeRetries(m);
    try {
      const c = counter(60);
      m.workers.connect(new ScriptedWorker('w1', c.script));
      const { brid } = await stage.request('counting');
      await waitFor('some lines to be stored', () => c.seen.written >= 10);
      proxy.cut();
      // The build's writes are tried again and again while the database is away.
      await waitFor('the build to retry its writes', async () => (await retries()) >= 3);
      const during = c.seen.written;
      proxy.restore();
      await waitFor('the request to complete', async () => (await requestRow(brid)).complete === 1);
      expect(during).toBeLessThan(60);
      expect(await requestRow(brid)).toEqual({ complete: 1, results: Results.SUCCESS });
      const builds = await buildsOf(brid);
      expect(builds.map((b) => b.results)).toEqual([Results.SUCCESS]);
      expect(await countLines(builds[0]!.id)).toEqual(numbered(60));
      expect(c.seen.aborts).toEqual([]);
    } finally {
      proxy.restore();
      await m.stop();
    }
  });

  it('past the limit kills the command, ends the build RETRY (not EXCEPTION), and runs it again', async () => {
    // E = 8 s: builds ride out an outage of up to 5 s.
    const m = await stage.master('outage-2', masterYaml({ master_expiry_seconds: 8 }, CONFIG), { db: pool });
    try {
      const first = counter();
      let given = 0;
      m.workers.connect(new ScriptedWorker('w1', (cmd) => (given++ === 0 ? first.script(cmd) : quick(cmd))));
      const { brid } = await stage.request('counting');
      await waitFor('some lines to be stored', () => first.seen.written >= 5);
      proxy.cut();
      await waitFor('the command to be killed', () => first.seen.aborts.length === 1);
      expect((first.seen.aborts[0] as Interruption).immediate).toBe(true);
      // The database stays away until the build's last write waits for it: the step's own end
      // found the lease run out, as a master's does when an outage outlasts it.
      const before = await writeRetries(m);
      await waitFor(
        'the build to wait for the database to end it',
        async () => (await writeRetries(m)) >= before + 3,
      );
      proxy.restore();
      await waitFor('the request to complete', async () => (await requestRow(brid)).complete === 1);
      const builds = await buildsOf(brid);
      expect(builds.map((b) => b.results)).toEqual([Results.RETRY, Results.SUCCESS]);
      expect(builds[0]!.state_string).toMatch(/^retry/);
      // Its step and log the outage interrupted ended with it, as the build did.
      expect(await openParts(builds[0]!.id)).toEqual({ steps: [], logs: 0 });
      expect(await stepResults(builds[0]!.id)).toEqual([
        ['worker_preparation', Results.SUCCESS],
        ['count', Results.RETRY],
      ]);
      // What was stored before the outage is a clean prefix.
      const lines = await countLines(builds[0]!.id);
      expect(lines).toEqual(numbered(lines.length));
    } finally {
      proxy.restore();
      await m.stop();
    }
  });
});
