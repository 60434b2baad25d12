// The GitHub status reporter end to end: masters in-process (real PostgreSQL, a private
// Redis, BullMQ), builds run on scripted workers, and a forge on 127.0.0.1 that checks every
// request against GitHub's documented "create a commit status" request
// (POST /repos/{owner}/{repo}/statuses/{sha}; JSON {state, target_url, description, context},
// state one of error, failure, pending, success; a User-Agent; an Authorization token).
// It checks the statuses of a whole build in order, retries after a 500, giving up on a 4xx,
// that a reporter's failure never changes a build's result, and that a delivery waiting in
// its backoff survives its master's stop and is delivered once by another master.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { Forge, type Received } from '../../helpers/forge.js';
import { eventually, waitFor } from '../../helpers/wait.js';
import { ScriptedWorker, Stage } from '../in-process.js';
import { BUILDERS, requestBuild } from './builds.js';

const TOKEN = 'ghp_test-token';
const STATES = new Set(['error', 'failure', 'pending', 'success']);
const STATUS_PATH = /^\/api\/v3\/repos\/([^/]+)\/([^/]+)\/statuses\/([0-9a-f]{40})$/;

function githubShape(r: Omit<Received, 'status' | 'problems'>): string[] {
  const problems: string[] = [];
  if (r.method !== 'POST') problems.push(`method ${r.method}`);
  if (!STATUS_PATH.test(r.url)) problems.push(`path ${r.url}`);
  if (r.headers.authorization !== `token ${TOKEN}`) problems.push('no token');
  if (!r.headers['user-agent']) problems.push('no User-Agent (GitHub refuses requests without one)');
  if (!String(r.headers['content-type']).startsWith('application/json')) problems.push('not JSON');
  const body = r.body as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null) return [...problems, 'no JSON object'];
  if (!STATES.has(body.state as string)) problems.push(`state ${String(body.state)}`);
  for (const k of ['target_url', 'description', 'context'])
    if (k in body && body[k] !== null && typeof body[k] !== 'string') problems.push(`${k} not a string`);
  const extra = Object.keys(body).filter(
    (k) => !['state', 'target_url', 'description', 'context'].includes(k),
  );
  if (extra.length) problems.push(`unknown keys ${extra.join(', ')}`);
  return problems;
}

const config = (forge: Forge) => `${BUILDERS}
reporters:
  - type: github
    token: ${TOKEN}
    baseURL: ${forge.url}/api/v3/
`;

let stage: Stage;
let forge: Forge;
beforeAll(async () => {
  [stage, forge] = await Promise.all([
    Stage.open(),
    Forge.start(githubShape, (r) => ({ id: 1, ...(r.body as object) })),
  ]);
}, 60_000);
afterAll(async () => {
  await stage?.close();
  await forge?.close();
});

let shaCount = 0;
/** A fresh commit for each request, so each test reads only its own statuses. */
function nextSha(): string {
  shaCount++;
  return shaCount.toString(16).padStart(40, 'a');
}

const request = async (builder: 'app' | 'broken', sha: string): Promise<number> =>
  (await requestBuild(stage, builder, { repository: 'https://github.com/acme/widgets.git', revision: sha }))
    .brid;

const statusesFor = (sha: string) => forge.received.filter((r) => r.url.endsWith(`/statuses/${sha}`));
const delivered = (sha: string) => statusesFor(sha).filter((r) => r.status === 201);
const bodies = (rs: Received[]) => rs.map((r) => r.body as Record<string, string>);

async function buildResults(brid: number): Promise<number | null> {
  const rows: { results: number | null }[] = await stage.db.pool.query(
    sql`SELECT results FROM builds WHERE buildrequestid = ${brid} ORDER BY id`,
  );
  return rows.at(-1)?.results ?? null;
}

describe('GitHub commit statuses', () => {
  it('posts pending, started and done for a build, in order, in the documented shape', async () => {
    const m = await stage.master('gh-a', config(forge), { timing: { reportBackoffMs: 50 } });
    const sha = nextSha();
    const brid = await request('app', sha);
    // No worker yet: the request's pending status comes alone, before any build.
    await waitFor('the pending status', () => delivered(sha).length === 1);
    m.workers.connect(new ScriptedWorker('w1'));
    await waitFor('the final status', () => delivered(sha).length === 3);
    expect(statusesFor(sha).every((r) => r.status === 201)).toBe(true);
    const builderid = (
      await stage.db.pool.query(sql`SELECT builderid FROM buildrequests WHERE id = ${brid}`)
    )[0].builderid;
    expect(bodies(delivered(sha))).toEqual([
      {
        state: 'pending',
        description: 'Build pending.',
        context: 'buildbot/app',
        target_url: `http://flotilla.test/#/builders/${builderid}`,
      },
      {
        state: 'pending',
        description: 'Build started.',
        context: 'buildbot/app',
        target_url: `http://flotilla.test/#/builders/${builderid}/builds/1`,
      },
      {
        state: 'success',
        description: 'Build done.',
        context: 'buildbot/app',
        target_url: `http://flotilla.test/#/builders/${builderid}/builds/1`,
      },
    ]);
    expect(delivered(sha)[0]!.url).toBe(`/api/v3/repos/acme/widgets/statuses/${sha}`);
    expect(delivered(sha)[0]!.headers.accept).toBe('application/vnd.github+json');

    // A failing build ends in `failure`.
    const bad = nextSha();
    await request('broken', bad);
    await waitFor('the failure status', () =>
      delivered(bad).some((r) => (r.body as { state: string }).state !== 'pending'),
    );
    expect(bodies(delivered(bad)).at(-1)).toMatchObject({ state: 'failure', description: 'Build done.' });

    // The reporter's queue and outcomes are in /metrics.
    const metrics = (await m.master.metrics()).body;
    expect(metrics).toMatch(/flotilla_jobs_queue_depth\{queue="report-github",state="failed"\} 0/);
    expect(metrics).toMatch(/flotilla_reports_total\{reporter="github",outcome="sent"\} [1-9]/);
    await m.stop();
  });

  it('retries after a 500, gives up on a 4xx, and never changes the build', async () => {
    const m = await stage.master('gh-b', config(forge), { timing: { reportBackoffMs: 50 } });
    m.workers.connect(new ScriptedWorker('w1'));

    // Every status for this commit fails twice with a 500, then goes through.
    const flaky = nextSha();
    const tries = new Map<string, number>();
    forge.fail = (r) => {
      if (!r.url.endsWith(flaky)) return undefined;
      const d = (r.body as { description: string }).description;
      const n = (tries.get(d) ?? 0) + 1;
      tries.set(d, n);
      return n <= 2 ? 500 : undefined;
    };
    const brid = await request('app', flaky);
    await waitFor('the final status', () =>
      delivered(flaky).some((r) => (r.body as { state: string }).state === 'success'),
    );
    expect(await buildResults(brid)).toBe(Results.SUCCESS);
    const done = statusesFor(flaky).filter(
      (r) => (r.body as { description: string }).description === 'Build done.',
    );
    expect(done.map((r) => r.status)).toEqual([500, 500, 201]);
    // Whatever order the retries ended in, the last status GitHub holds is the build's end.
    expect(bodies(delivered(flaky)).at(-1)).toMatchObject({ state: 'success', description: 'Build done.' });

    // A 4xx (GitHub's answer to an unknown commit) would fail the same way again: one try each.
    const unknown = nextSha();
    forge.fail = (r) => (r.url.endsWith(unknown) ? 404 : undefined);
    const brid2 = await request('app', unknown);
    await waitFor(
      `the build of request ${brid2} to finish`,
      async () => (await buildResults(brid2)) !== null,
    );
    expect(await buildResults(brid2)).toBe(Results.SUCCESS);
    const failedJobs = async () => {
      const text = (await m.master.metrics()).body;
      return Number(
        /flotilla_jobs_queue_depth\{queue="report-github",state="failed"\} (\d+)/.exec(text)?.[1] ?? 0,
      );
    };
    // Pending, started and done: each job failed for good after its one attempt.
    expect(await eventually(failedJobs, (n) => n >= 3)).toBe(3);
    expect(statusesFor(unknown)).toHaveLength(3);
    const perDescription = new Map<string, number>();
    for (const r of statusesFor(unknown)) {
      const d = (r.body as { description: string }).description;
      perDescription.set(d, (perDescription.get(d) ?? 0) + 1);
    }
    expect([...perDescription.values()].every((n) => n === 1)).toBe(true);
    forge.fail = () => undefined;
    await m.stop();
  });

  it('keeps a delivery across its master stopping; another master delivers it once', async () => {
    const a = await stage.master('gh-c', config(forge), { timing: { reportBackoffMs: 200 } });
    a.workers.connect(new ScriptedWorker('w1'));
    const sha = nextSha();
    let down = true;
    forge.fail = (r) =>
      r.url.endsWith(sha) && down && (r.body as { description: string }).description === 'Build done.'
        ? 503
        : undefined;
    const brid = await request('app', sha);
    await waitFor('a failed attempt at the final status', () =>
      statusesFor(sha).some((r) => r.status === 503),
    );
    expect(await buildResults(brid)).toBe(Results.SUCCESS);
    await a.stop();

    down = false;
    const b = await stage.master('gh-d', config(forge), { timing: { reportBackoffMs: 200 } });
    await waitFor('the final status', () =>
      delivered(sha).some((r) => (r.body as { state: string }).state === 'success'),
    );
    // Nothing left to deliver anywhere; the final status went out once, and nothing after it.
    await waitFor('the queue to empty', async () => {
      const text = (await b.master.metrics()).body;
      return ['waiting', 'active', 'delayed'].every((s) =>
        new RegExp(`flotilla_jobs_queue_depth\\{queue="report-github",state="${s}"\\} 0`).test(text),
      );
    });
    const ok = bodies(delivered(sha));
    expect(ok.filter((s) => s.description === 'Build done.')).toHaveLength(1);
    expect(ok.at(-1)).toMatchObject({ state: 'success', description: 'Build done.' });
    forge.fail = () => undefined;
    await b.stop();
  });

  it('reports the end of a build that ended while no master with reporters ran, once', async () => {
    // The build runs on a master without reporters; the one with them hears its start, then
    // stops before the build ends: nothing is left to hear that end.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hearing = await stage.master('gh-f', config(forge));
    const running = await stage.master('gh-g', BUILDERS);
    running.workers.connect(
      new ScriptedWorker('w1', async () => {
        await gate;
        return {};
      }),
    );
    const sha = nextSha();
    const brid = await request('app', sha);
    await waitFor('the start reported', () =>
      bodies(delivered(sha)).some((s) => s.description === 'Build started.'),
    );
    await hearing.stop();
    release();
    await eventually(
      () => buildResults(brid),
      (r) => r === Results.SUCCESS,
    );
    await running.stop();
    expect(bodies(delivered(sha)).some((s) => s.description === 'Build done.')).toBe(false);

    // A master with reporters starts: it finds the undelivered end and reports it.
    const later = await stage.master('gh-h', config(forge));
    await waitFor('the final status', () =>
      bodies(delivered(sha)).some((s) => s.state === 'success' && s.description === 'Build done.'),
    );
    await waitFor('the queue to empty', async () => {
      const text = (await later.master.metrics()).body;
      return ['waiting', 'active', 'delayed'].every((s) =>
        new RegExp(`flotilla_jobs_queue_depth\\{queue="report-github",state="${s}"\\} 0`).test(text),
      );
    });
    const ok = bodies(delivered(sha));
    expect(ok.map((s) => [s.state, s.description])).toEqual([
      ['pending', 'Build pending.'],
      ['pending', 'Build started.'],
      ['success', 'Build done.'],
    ]);
    await later.stop();
  });

  it('starts nothing for a master without reporters', async () => {
    const m = await stage.master('gh-e', BUILDERS);
    expect((await m.master.metrics()).body).not.toContain('report-');
    await m.stop();
  });
});
