// Builds run for real: a forced build runs shell commands on a real worker, and the REST API
// shows its steps, logs (line by line), properties, results and state strings as Buildbot
// writes them; builds stop, requests cancel, builds rebuild and trigger children.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { publish } from '../../services/core/events/bus.js';
import { createRedis } from '../../services/core/redis.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

let c: Cluster;
let master: MasterProc;
beforeAll(async () => {
  c = await Cluster.start({
    // Buildbot's Dependent (issue 31): `dep-down` builds what `dep-up` built once it succeeds.
    config: {
      builders: [
        { name: 'dep-up', workers: ['w1', 'w2'], steps: [{ type: 'shell', name: 'up', command: 'true' }] },
        {
          name: 'dep-down',
          workers: ['w1', 'w2'],
          steps: [{ type: 'shell', name: 'down', command: 'true' }],
        },
      ],
      force_schedulers: [{ name: 'force-dep-up', builders: ['dep-up'] }],
      schedulers: [
        { type: 'dependent', name: 'after-dep-up', upstream: 'force-dep-up', builders: ['dep-down'] },
      ],
    },
  });
  master = await c.startMaster('e2e-master-1');
  await c.startWorker('w1', master);
  await c.startWorker('w2', master);
});
afterAll(async () => {
  await c?.stop();
});

const ids = (o: Record<string, number>) => Object.values(o);

describe('a forced build', () => {
  let build: any;
  let steps: any[];
  beforeAll(async () => {
    const [, brids] = await c.force('force-basic', { reason: 'first run' });
    build = await c.finished((await c.buildOf(ids(brids)[0]!)).buildid);
    steps = (await c.get(`/builds/${build.buildid}/steps`)).steps;
  });

  it('ends as Buildbot ends it: warnings from a warnOnFailure step, with its summary', () => {
    expect(build.results).toBe(1);
    expect(build.state_string).toBe(`warnings 'echo "3 ...' (failure)`);
    expect(build.number).toBe(1);
  });

  it('has the steps Buildbot would show, with their state strings and results', () => {
    expect(steps.map((s) => [s.name, s.results, s.state_string, s.hidden])).toEqual([
      ['worker_preparation', 0, 'worker w1 ready', false],
      ['lines', 0, `'for i ...'`, false],
      ['get-version', 0, `property 'version' set`, false],
      ['use-property', 0, `'echo "version ...'`, false],
      ['lint', 2, `'echo "3 ...' (failure)`, false],
      ['never', 3, `'echo never' (skipped)`, true],
      ['unicode', 0, `'printf 'é ...'`, false],
    ]);
    for (const s of steps) expect(s.complete).toBe(true);
    // addStepURL: the configured link, properties filled in; the other steps have none.
    expect(steps.find((s) => s.name === 'use-property').urls).toEqual([
      { name: 'release 1.2.42', url: 'https://example.test/basic/1' },
    ]);
    expect(steps.filter((s) => s.urls.length > 0)).toHaveLength(1);
  });

  it('stores every output line, in order, with its stream', async () => {
    const stepid = steps.find((s) => s.name === 'lines').stepid;
    const log = (await c.get(`/steps/${stepid}/logs/stdio`)).logs[0];
    expect(log.complete).toBe(true);
    const content: string = (await c.get(`/logs/${log.logid}/contents`)).logchunks[0].content;
    const lines = content.split('\n');
    expect(lines[0]).toMatch(/^hfor i in \$\(seq 1 500\)/);
    const out = lines.filter((l) => l.startsWith('o'));
    expect(out).toHaveLength(500);
    expect(out[0]).toBe('oline 1');
    expect(out[499]).toBe('oline 500');
    expect(lines).toContain('eto stderr');
    expect(lines.filter((l) => l.startsWith('h')).at(-2)).toBe('hprogram finished with exit code 0');
    expect(log.num_lines).toBe(content.split('\n').length - 1);
    const page = (await c.get(`/logs/${log.logid}/contents?offset=100&limit=3`)).logchunks[0];
    expect(page).toMatchObject({ firstline: 100, content: `${lines.slice(100, 103).join('\n')}\n` });
    const raw = await c.text(`/logs/${log.logid}/raw`);
    expect(raw.split('\n')).toContain('line 250');
  });

  it('keeps unicode', async () => {
    const stepid = steps.find((s) => s.name === 'unicode').stepid;
    expect(await c.text(`/steps/${stepid}/logs/stdio/raw`)).toContain('é ü ß ✓');
  });

  it('sets properties from the form, the build, the worker and the steps', async () => {
    const props = (await c.get(`/builds/${build.buildid}/properties`)).properties[0];
    expect(props).toMatchObject({
      buildername: ['basic', 'Builder'],
      buildnumber: [1, 'Build'],
      flavour: ['plain', 'Builder'],
      workername: ['w1', 'Worker'],
      os: ['test-os', 'Worker'],
      owner: ['E2E <e2e@example.com>', 'Force Build Form'],
      reason: ['first run', 'Force Build Form'],
      scheduler: ['force-basic', 'Scheduler'],
      version: ['1.2.42', 'SetPropertyFromCommand Step'],
    });
    const use = steps.find((s) => s.name === 'use-property').stepid;
    expect(await c.text(`/steps/${use}/logs/stdio/raw`)).toContain('version is 1.2.42 on test-os');
  });

  it('completes its request and build set', async () => {
    const br = (await c.get(`/buildrequests/${build.buildrequestid}`)).buildrequests[0];
    expect(br).toMatchObject({ complete: true, results: 1, claimed: true });
    const bs = (await c.get(`/buildsets/${br.buildsetid}`)).buildsets[0];
    expect(bs).toMatchObject({ complete: true, results: 1 });
  });
});

describe('extra logs', () => {
  it('a step follows the files it names as stream logs, as Buildbot 3.7 (an .html name too)', async () => {
    const [, brids] = await c.force('force-reports');
    const build = await c.finished((await c.buildOf(Object.values(brids)[0]!)).buildid);
    expect(build.results).toBe(0);
    const step = (await c.get(`/builds/${build.buildid}/steps?name=report`)).steps[0];
    const logs = (await c.get(`/steps/${step.stepid}/logs?order=logid`)).logs;
    expect(logs.map((l: any) => [l.name, l.slug, l.type, l.complete])).toEqual([
      ['stdio', 'stdio', 's', true],
      ['summary', 'summary', 's', true],
      ['report.html', 'report_html', 's', true],
      // As Buildbot's: every logfile has its log from the start, empty if its file never came.
      ['missing', 'missing', 's', true],
    ]);
    // A stream log's raw text, as Buildbot's: each line without its stream, no newline after the last.
    expect(await c.text(`/steps/${step.stepid}/logs/summary/raw`)).toBe('summary line 1\nsummary line 2');
    const html = await fetch(`${c.api.base}/steps/${step.stepid}/logs/report_html/raw`);
    expect(html.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await html.text()).toBe('<h1>Report</h1>');
  });
});

describe('halting', () => {
  it('a haltOnFailure step stops the build; alwaysRun steps still run', async () => {
    const [, brids] = await c.force('force-halting');
    const build = await c.finished((await c.buildOf(ids(brids)[0]!)).buildid);
    expect(build.results).toBe(2);
    expect(build.state_string).toBe(`failed 'exit 1' (failure)`);
    const steps = (await c.get(`/builds/${build.buildid}/steps`)).steps.map((s: any) => [s.name, s.results]);
    expect(steps).toEqual([
      ['worker_preparation', 0],
      ['fails', 2],
      ['cleanup', 0],
    ]);
  });
});

describe('control', () => {
  it('stop ends a running build CANCELLED, interrupting its step', async () => {
    const [, brids] = await c.force('force-slow');
    const build = await c.buildOf(ids(brids)[0]!);
    await waitFor('the command to run', async () => {
      const s = (await c.get(`/builds/${build.buildid}/steps?name=wait`)).steps[0];
      return Boolean(s?.started_at);
    });
    expect(await c.rpc(`/builds/${build.buildid}`, 'stop', { reason: 'e2e stop' })).toBeNull();
    const done = await c.finished(build.buildid);
    expect(done.results).toBe(6);
    expect(done.state_string).toMatch(/^cancelled \(e2e stop\)/);
    const steps = (await c.get(`/builds/${build.buildid}/steps`)).steps.map((s: any) => [s.name, s.results]);
    expect(steps).toEqual([
      ['worker_preparation', 0],
      ['wait', 6],
      ['after', 0],
    ]);
    const br = (await c.get(`/buildrequests/${build.buildrequestid}`)).buildrequests[0];
    expect(br).toMatchObject({ complete: true, results: 6 });
  });

  it('a stop that arrives before the master has registered the build still stops it', async () => {
    // The API publishes a stop as soon as it sees the build's row; here it comes even earlier,
    // for the id the next build will get.
    const [row] = await c.db.pool.query(sql`SELECT coalesce(max(id), 0)::int AS id FROM builds`);
    const redis = createRedis(c.redis.url, 'e2e-early-stop');
    try {
      await publish(redis, ['control', 'builds', row.id + 1, 'stop'], { reason: 'early' });
    } finally {
      redis.disconnect();
    }
    const [, brids] = await c.force('force-slow');
    const build = await c.buildOf(ids(brids)[0]!);
    expect(build.buildid).toBe(row.id + 1);
    const done = await c.finished(build.buildid);
    expect(done.results).toBe(6);
    expect(done.state_string).toMatch(/^cancelled \(early\)/);
  });

  it('cancel completes a pending request CANCELLED at once', async () => {
    const [bsid, brids] = await c.force('force-unreachable');
    const brid = ids(brids)[0]!;
    expect((await c.get(`/buildrequests/${brid}`)).buildrequests[0].complete).toBe(false);
    await c.rpc(`/buildrequests/${brid}`, 'cancel', { reason: 'not needed' });
    expect((await c.get(`/buildrequests/${brid}`)).buildrequests[0]).toMatchObject({
      complete: true,
      results: 6,
    });
    expect((await c.get(`/buildsets/${bsid}`)).buildsets[0]).toMatchObject({ complete: true, results: 6 });
  });

  it('rebuild runs the build again with the same source stamps and properties', async () => {
    const [, brids] = await c.force('force-halting', { reason: 'to rebuild' });
    const first = await c.finished((await c.buildOf(ids(brids)[0]!)).buildid);
    const [bsid2, brids2] = await c.rpc(`/builds/${first.buildid}`, 'rebuild');
    const second = await c.finished((await c.buildOf(ids(brids2)[0]!)).buildid);
    expect(second.number).toBe(first.number + 1);
    const bs = (await c.get(`/buildsets/${bsid2}`)).buildsets[0];
    expect(bs.reason).toBe('rebuild');
    const props = (await c.get(`/builds/${second.buildid}/properties`)).properties[0];
    expect(props.reason).toEqual(['to rebuild', 'Force Build Form']);
  });
});

describe('changes', () => {
  it('a change posted to the base hook is scheduled on its branch and built', async () => {
    const res = await fetch(`${c.api.base.replace('/api/v2', '')}/change_hook/base`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        author: 'Dev <dev@example.com>',
        comments: 'Make it faster',
        revision: 'abc123',
        branch: 'main',
        repository: 'https://git.example.com/project.git',
        project: 'project',
        files: JSON.stringify(['src/fast.c']),
      }).toString(),
    });
    expect(res.status).toBe(200);
    const change = (await c.get('/changes?revision=abc123')).changes[0];
    expect(change).toMatchObject({ author: 'Dev <dev@example.com>', branch: 'main', files: ['src/fast.c'] });
    let bs: any;
    await waitFor('the scheduler to add a build set', async () => {
      bs = (await c.get('/buildsets?order=-bsid&limit=1')).buildsets[0];
      return bs?.reason === "The SingleBranchScheduler scheduler named 'on-main' triggered this build";
    });
    expect(bs.sourcestamps[0]).toMatchObject({ revision: 'abc123', branch: 'main', project: 'project' });
    const br = (await c.get(`/buildrequests?buildsetid=${bs.bsid}`)).buildrequests[0];
    const build = await c.finished((await c.buildOf(br.buildrequestid)).buildid);
    expect(build.results).toBe(0);
    expect((await c.get(`/builds/${build.buildid}/changes`)).changes.map((x: any) => x.changeid)).toEqual([
      change.changeid,
    ]);
    const owner = (await c.get('/schedulers?name=on-main')).schedulers[0].master;
    expect(owner.name).toBe('e2e-master-1');
  });

  it('a change on another branch builds nothing', async () => {
    const before = (await c.get('/buildsets')).meta.total;
    const post = (branch: string, revision: string) =>
      fetch(`${c.api.base.replace('/api/v2', '')}/change_hook/base`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          author: 'Dev <dev@example.com>',
          comments: 'x',
          revision,
          branch,
        }).toString(),
      });
    expect((await post('side', 'def456')).status).toBe(200);
    // A change on main after it: the scheduler weighs changes in order, so once this one has
    // its build set, the side change was weighed too.
    expect((await post('main', 'after-side')).status).toBe(200);
    let sets: any[] = [];
    await waitFor('the main change to be scheduled', async () => {
      sets = (await c.get('/buildsets?order=-bsid&limit=10')).buildsets;
      return sets.some((bs) => bs.sourcestamps[0]?.revision === 'after-side');
    });
    expect(sets.filter((bs) => bs.sourcestamps[0]?.revision === 'def456')).toEqual([]);
    expect((await c.get('/buildsets')).meta.total).toBe(before + 1);
  });
});

describe('trigger', () => {
  it('a triggered child build set carries its parent, and the parent waits for it', async () => {
    const [, brids] = await c.force('force-parent');
    const parent = await c.finished((await c.buildOf(ids(brids)[0]!)).buildid, 90_000);
    expect(parent.results).toBe(0);
    const children = (await c.get(`/buildsets?parent_buildid=${parent.buildid}`)).buildsets;
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ parent_relationship: 'Triggered from', complete: true, results: 0 });
    expect(children[0].reason).toBe("The Triggerable scheduler named 'child-trigger' triggered this build");
    const trig = (await c.get(`/builds/${parent.buildid}/steps?name=trigger-child`)).steps[0];
    expect(trig.state_string).toBe('triggered child-trigger, 1 success');
    // Buildbot's order: the step's properties, then the scheduler's (its name among them).
    const props = (await c.get(`/buildsets/${children[0].bsid}/properties`)).properties[0];
    expect(props).toMatchObject({
      parent_version: ['9.9', 'Trigger'],
      scheduler: ['child-trigger', 'Scheduler'],
    });
    const childReq = (await c.get(`/buildrequests?buildsetid=${children[0].bsid}`)).buildrequests[0];
    expect(childReq.waited_for).toBe(true);
    const child = (await c.get(`/buildrequests/${childReq.buildrequestid}/builds`)).builds[0];
    const show = (await c.get(`/builds/${child.buildid}/steps?name=show`)).steps[0];
    expect(await c.text(`/steps/${show.stepid}/logs/stdio/raw`)).toContain('child of 9.9');
  });
});

describe('dependent scheduler', () => {
  it('builds its builders on the upstream build set stamps once that build set succeeds', async () => {
    const [upBsid, brids] = await c.force('force-dep-up');
    const up = await c.finished((await c.buildOf(ids(brids)[0]!)).buildid);
    expect(up.results).toBe(0);
    let upstream: any;
    await waitFor('the upstream build set to complete', async () => {
      upstream = (await c.get(`/buildsets/${upBsid}`)).buildsets[0];
      return upstream.complete;
    });
    expect(upstream.results).toBe(0);
    let down: any;
    await waitFor('the downstream build set', async () => {
      const sets = (await c.get('/buildsets?order=-bsid&limit=10')).buildsets;
      down = sets.find((bs: any) => bs.reason === 'downstream');
      return down !== undefined;
    });
    expect(down.sourcestamps.map((ss: any) => ss.ssid)).toEqual(
      upstream.sourcestamps.map((ss: any) => ss.ssid),
    );
    const props = (await c.get(`/buildsets/${down.bsid}/properties`)).properties[0];
    expect(props.scheduler).toEqual(['after-dep-up', 'Scheduler']);
    const req = (await c.get(`/buildrequests?buildsetid=${down.bsid}`)).buildrequests[0];
    const builder = (await c.get('/builders/dep-down')).builders[0];
    expect(req.builderid).toBe(builder.builderid);
    const build = await c.finished((await c.buildOf(req.buildrequestid)).buildid);
    expect(build.results).toBe(0);
  });
});
