// The build runner in-process, against a real database, with scripted workers: steps run in
// order with their output stored and their properties set; a stop reaches the running step
// through its signal; a lost worker or a leaving master ends the build RETRY and hands the
// request back; a trigger step wakes on its build sets' completion events, and finds them
// by polling when no event comes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { eventually, waitFor } from '../../helpers/wait.js';
import { type InProcessMaster, interrupted, ScriptedWorker, Stage } from '../in-process.js';

// A lost worker's request goes back only once that worker must have killed its commands
// (services/master/liveness.ts): a short silence keeps the wait short.
const CONFIG = `
log_compression: none
worker_silence_seconds: 0.4
workers:
  - { name: w1, password: x, max_builds: 4, properties: { os: scripted } }
  - { name: w2, password: x, max_builds: 4 }
builders:
  - name: basic
    workers: [w1]
    steps:
      - { type: shell, name: hello, command: "echo hello; echo oops >&2" }
      - { type: set_property, name: version, command: "echo 1.2.3", property: version }
      - { type: shell, name: use, command: "echo version %(prop:version)s on %(prop:os)s" }
      - { type: shell, name: lint, command: "exit 2", flunkOnFailure: false, warnOnFailure: true }
  - name: stoppable
    workers: [w1, w2]
    steps:
      - { type: shell, name: wait, command: "echo started; hang" }
      - { type: shell, name: skipped, command: "echo should not run" }
      - { type: shell, name: after, command: "echo after", alwaysRun: true }
  - name: parent
    workers: [w1]
    steps:
      - { type: trigger, name: go, schedulers: [kids], waitForFinish: true }
  - name: child
    workers: [w2]
    steps:
      - { type: shell, name: work, command: "child" }
schedulers:
  - { type: triggerable, name: kids, builders: [child] }
`;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
});
afterAll(() => stage?.close());

interface BuildRow {
  id: number;
  results: number | null;
  state_string: string;
  masterid: number;
  workerid: number;
}

async function buildsOf(brid: number): Promise<BuildRow[]> {
  return stage.db.pool.query(sql`
    SELECT id, results, state_string, masterid, workerid FROM builds WHERE buildrequestid = ${brid} ORDER BY id`);
}

/** The request's builds once `n` of them have finished. */
async function finished(brid: number, n = 1): Promise<BuildRow[]> {
  return eventually(
    () => buildsOf(brid),
    (bs) => bs.filter((b) => b.results !== null).length >= n,
  );
}

async function steps(buildid: number) {
  return stage.db.pool.query(sql`
    SELECT name, results, state_string, hidden FROM steps WHERE buildid = ${buildid} ORDER BY number`);
}

async function stdio(buildid: number, step: string): Promise<string> {
  const rows = await stage.db.pool.query(sql`
    SELECT c.content FROM logchunks c JOIN logs l ON l.id = c.logid JOIN steps s ON s.id = l.stepid
    WHERE s.buildid = ${buildid} AND s.name = ${step} AND l.name = 'stdio' ORDER BY c.first_line`);
  // Each chunk holds whole lines, each led by its stream, without the last newline.
  return rows.map((r) => r.content.toString()).join('\n');
}

async function requestRow(brid: number) {
  const [row] = await stage.db.pool.query(sql`
    SELECT br.complete, br.results, (SELECT count(*)::int FROM buildrequest_claims c WHERE c.brid = br.id) AS claims
    FROM buildrequests br WHERE br.id = ${brid}`);
  return row as { complete: number; results: number; claims: number };
}

describe('a build on a scripted worker', () => {
  let m: InProcessMaster;
  let w1: ScriptedWorker;
  beforeAll(async () => {
    m = await stage.master('runner-a', CONFIG);
    w1 = m.workers.connect(new ScriptedWorker('w1'));
  });
  afterAll(() => m.stop());

  it('runs each step in order, stores its output, sets and uses properties', async () => {
    const { brid } = await stage.request('basic');
    const [build] = await finished(brid);
    expect(build!.results).toBe(Results.WARNINGS);
    expect(build!.masterid).toBe(m.master.masterid);
    expect(await steps(build!.id)).toEqual([
      { name: 'worker_preparation', results: 0, state_string: 'worker w1 ready', hidden: 0 },
      { name: 'hello', results: 0, state_string: "'echo hello; ...'", hidden: 0 },
      { name: 'version', results: 0, state_string: "property 'version' set", hidden: 0 },
      { name: 'use', results: 0, state_string: "'echo version ...'", hidden: 0 },
      { name: 'lint', results: 2, state_string: "'exit 2' (failure)", hidden: 0 },
    ]);
    expect(await stdio(build!.id, 'hello')).toBe('ohello\neoops');
    // The command ran as rendered, with the property the step before set.
    expect(w1.commands.map((c) => c.command)).toContain('echo version 1.2.3 on scripted');
    const [prop] = await stage.db.pool.query(sql`
      SELECT value, source FROM build_properties WHERE buildid = ${build!.id} AND name = 'version'`);
    expect(prop).toEqual({ value: '"1.2.3"', source: 'SetPropertyFromCommand Step' });
    expect(await requestRow(brid)).toMatchObject({ complete: 1, results: Results.WARNINGS });
  });

  it("sets builddir absolute on the worker, and owners from an empty owner as Buildbot does ([''])", async () => {
    const { brid } = await stage.request('basic', { owner: ['', 'Force Build Form'] });
    const [build] = await finished(brid);
    const rows = await stage.db.pool.query(sql`
      SELECT name, value, source FROM build_properties
      WHERE buildid = ${build!.id} AND name IN ('builddir', 'owners') ORDER BY name`);
    expect(rows).toEqual([
      { name: 'builddir', value: '"/scripted/w1/basic"', source: 'Worker' },
      { name: 'owners', value: '[""]', source: 'Build' },
    ]);
  });

  it('a stop interrupts the running step; after it only alwaysRun steps run, in full', async () => {
    const { brid } = await stage.request('stoppable');
    const [build] = await eventually(
      () => buildsOf(brid),
      (bs) => bs.length === 1,
    );
    await waitFor('the step to run', async () => (await stdio(build!.id, 'wait')) === 'ostarted');
    expect(m.master.runner.stop(build!.id, 'enough')).toBe(true);
    const [done] = await finished(brid);
    expect(done!.results).toBe(Results.CANCELLED);
    expect(done!.state_string).toMatch(/^cancelled \(enough\)/);
    expect((await steps(build!.id)).map((s) => [s.name, s.results])).toEqual([
      ['worker_preparation', 0],
      ['wait', Results.CANCELLED],
      ['after', Results.SUCCESS],
    ]);
    expect(await stdio(build!.id, 'after')).toBe('oafter');
  });
});

describe('losing a build', () => {
  it('a worker lost mid-step ends the build RETRY, runs nothing more, and the request runs again elsewhere', async () => {
    const m = await stage.master('runner-b', CONFIG);
    try {
      const w1 = m.workers.connect(new ScriptedWorker('w1'));
      const { brid } = await stage.request('stoppable');
      await waitFor('the step to run', () => w1.running === 1);
      m.workers.disconnect('w1');
      const [lost] = await finished(brid);
      expect(lost!.results).toBe(Results.RETRY);
      expect((await steps(lost!.id)).map((s) => [s.name, s.results])).toEqual([
        ['worker_preparation', 0],
        ['wait', Results.RETRY],
      ]);
      expect(await requestRow(brid)).toMatchObject({ complete: 0, claims: 0 });
      // Another worker, which finishes what it is given.
      m.workers.connect(new ScriptedWorker('w2', async () => ({ rc: 0 })));
      const builds = await finished(brid, 2);
      expect(builds.map((b) => b.results)).toEqual([Results.RETRY, Results.SUCCESS]);
      expect(await requestRow(brid)).toMatchObject({ complete: 1, results: Results.SUCCESS });
    } finally {
      await m.stop();
    }
  });

  it('a master that stops without waiting hands its running builds back', async () => {
    const m = await stage.master('runner-c', CONFIG, { drainMs: 0 });
    const w1 = m.workers.connect(new ScriptedWorker('w1'));
    const { brid } = await stage.request('stoppable');
    await waitFor('the step to run', () => w1.running === 1);
    await m.stop();
    const [build] = await finished(brid);
    expect(build!.results).toBe(Results.RETRY);
    expect(await requestRow(brid)).toMatchObject({ complete: 0, claims: 0 });
    const [master] = await stage.db.pool.query(sql`SELECT active FROM masters WHERE name = 'runner-c'`);
    expect(master.active).toBe(0);
    // Another master runs it.
    const next = await stage.master('runner-c2', CONFIG);
    try {
      next.workers.connect(new ScriptedWorker('w1', async () => ({ rc: 0 })));
      const builds = await finished(brid, 2);
      expect(builds.map((b) => [b.results, b.masterid])).toEqual([
        [Results.RETRY, build!.masterid],
        [Results.SUCCESS, next.master.masterid],
      ]);
    } finally {
      await next.stop();
    }
  });
});

describe('a trigger step that waits', () => {
  /** A child worker whose commands end only when the test says. */
  function heldChild() {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const worker = new ScriptedWorker('w2', async (cmd) => {
      if (cmd.text !== 'child') throw new Error(`not the child's command: ${cmd.text}`);
      await Promise.race([released, interrupted(cmd.signal)]);
      return cmd.signal.aborted ? interrupted(cmd.signal) : { rc: 0 };
    });
    return { worker, release };
  }

  async function parentWaitsForChild(child: ReturnType<typeof heldChild>) {
    const { brid } = await stage.request('parent');
    await waitFor('the child to run', () => child.worker.running === 1);
    const [parent] = await buildsOf(brid);
    expect(parent!.results).toBeNull();
    child.release();
    const [done] = await finished(brid);
    expect(done!.results).toBe(Results.SUCCESS);
    // A step that succeeds leaves the build's state string alone.
    expect(done!.state_string).toBe('build successful');
    expect((await steps(done!.id)).at(-1)).toMatchObject({
      name: 'go',
      state_string: 'triggered kids, 1 success',
    });
  }

  it('wakes on its build set completing (with a poll too slow to be what woke it)', async () => {
    const m = await stage.master('runner-d', CONFIG, { timing: { triggerPollMs: 10 * 60_000 } });
    try {
      m.workers.connect(new ScriptedWorker('w1'));
      const child = heldChild();
      m.workers.connect(child.worker);
      await parentWaitsForChild(child);
    } finally {
      await m.stop();
    }
  });

  it('finds its build sets complete by polling when no event comes', async () => {
    const m = await stage.master('runner-e', CONFIG, {
      timing: { triggerPollMs: 100 },
      deafTo: (k) => /^buildsets\/\d+\/complete$/.test(k),
    });
    try {
      m.workers.connect(new ScriptedWorker('w1'));
      const child = heldChild();
      m.workers.connect(child.worker);
      await parentWaitsForChild(child);
    } finally {
      await m.stop();
    }
  });

  it('a stop ends the wait at once', async () => {
    const m = await stage.master('runner-f', CONFIG, { timing: { triggerPollMs: 10 * 60_000 } });
    try {
      m.workers.connect(new ScriptedWorker('w1'));
      const child = heldChild();
      m.workers.connect(child.worker);
      const { brid } = await stage.request('parent');
      await waitFor('the child to run', () => child.worker.running === 1);
      const [parent] = await buildsOf(brid);
      m.master.runner.stop(parent!.id, 'no more');
      const [done] = await finished(brid);
      expect(done!.results).toBe(Results.CANCELLED);
      expect((await steps(done!.id)).map((s) => [s.name, s.results, s.state_string])).toEqual([
        ['worker_preparation', 0, 'worker w1 ready'],
        ['go', Results.CANCELLED, 'triggered kids (cancelled)'],
      ]);
      child.release();
    } finally {
      await m.stop();
    }
  });
});
