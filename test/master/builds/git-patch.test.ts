// A source stamp's patch (a try build's) applied by the git step after its checkout, as
// Buildbot 3.7's Git step does (Source.patch, Git.applyPatch), on a real Flotilla agent and a
// real buildbot-worker 3.7 (msgpack), the same builder on each: the patch shows as the step's
// `patch` log, the checkout has it applied (at its level, in its subdir), the marker it leaves
// makes the next build clean the workdir first, and a patch that does not apply fails the step.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { eventually } from '../../helpers/wait.js';
import { Stage } from '../in-process.js';
import { deliverTryJobs } from '../schedulers/try-delivery.js';
import { apiOn, finishedBuild, gitIn, logs, request, steps } from './lib.js';
import { type RealWorkers, startRealWorkers } from './real-workers.js';

const root = mkdtempSync(join(tmpdir(), 'flotilla-git-patch-'));
const src = join(root, 'src');
const jobdir = join(root, 'jobdir');
// Not trimmed: a diff ends with its newline.
const git = (...args: string[]) => `${gitIn(src, ...args)}\n`;

/** The diff of a change to the working tree (as `buildbot try --vc git` makes it), then undone. */
function diffOf(change: () => void, ...args: string[]): string {
  change();
  const d = git('diff', ...args);
  git('checkout', '-q', '.');
  return d;
}

let stage: Stage;
let workers: RealWorkers;
let patchA: string;
let patchSub: string;

const builder = (worker: string) => `
  - name: patch-${worker}
    workers: [${worker}]
    steps:
      - { type: git, repourl: "file://${src}", mode: incremental }
      - { type: shell, name: show, command: "cat a.txt sub/b.txt; ls -A" }
`;

beforeAll(async () => {
  mkdirSync(join(src, 'sub'), { recursive: true });
  git('init', '-q', '--initial-branch=main');
  writeFileSync(join(src, 'a.txt'), 'one\n');
  writeFileSync(join(src, 'sub', 'b.txt'), 'bee\n');
  git('add', '-A');
  git('commit', '-qm', 'first');
  patchA = diffOf(() => writeFileSync(join(src, 'a.txt'), 'two\n'));
  // git apply takes a patch's paths from the top of the tree even in a subdir, where it
  // applies only what lies inside it: the subdir's own diff, at level 0 here.
  patchSub = diffOf(() => writeFileSync(join(src, 'sub', 'b.txt'), 'buzz\n'), '--no-prefix');
  stage = await Stage.open();
  workers = await startRealWorkers(
    stage,
    `
log_compression: none
workers: [{ name: agent, password: pw }, { name: bbw, password: pw }]
builders:
${builder('agent')}
${builder('bbw')}
schedulers:
  # Buildbot's spelling of the builders, as a master.cfg moved over keeps it.
  - { type: try_jobdir, name: try-dir, builderNames: [patch-agent, patch-bbw], jobdir: ${JSON.stringify(jobdir)} }
`,
    root,
    ['patch-bbw'],
  );
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.each(['agent', 'bbw'])('a patch on the source stamp, on %s', (worker) => {
  const run = async (patch?: { body: string; level?: number; subdir?: string }) => {
    const stamp = { repository: `file://${src}`, revision: null, ...(patch ? { patch } : {}) };
    const { brid } = await request(stage, `patch-${worker}`, [stamp]);
    const build = await finishedBuild(stage, brid, 90_000);
    const ran = (await steps(stage, build.id)).filter((s) => s.name !== 'worker_preparation');
    return { build, ran, git: await logs(stage, build.id, 'git'), show: await logs(stage, build.id, 'show') };
  };
  const workdir = () =>
    join(worker === 'bbw' ? workers.bbwDir : workers.agentDir, `patch-${worker}`, 'build');

  it('is applied after the checkout, and shown as the patch log', async () => {
    const r = await run({ body: patchA, level: 1 });
    expect(r.ran.map((s) => [s.name, s.results])).toEqual([
      ['git', Results.SUCCESS],
      ['show', Results.SUCCESS],
    ]);
    expect(r.git.patch).toBe(patchA.trimEnd());
    expect(r.git.stdio).toMatch(/\nhgit update-index --refresh\n/);
    expect(r.git.stdio).toMatch(/\nhgit apply --index -p 1 \.buildbot-diff\n/);
    expect(r.show.stdio).toMatch(/^otwo\nobee\n/m);
    // The patch file is gone, the marker stays (Buildbot's .buildbot-patched).
    expect(existsSync(join(workdir(), '.buildbot-diff'))).toBe(false);
    expect(existsSync(join(workdir(), '.buildbot-patched'))).toBe(true);
  });

  it('makes the next build clean the workdir first, which then has no patch', async () => {
    const r = await run();
    expect(r.build.results).toBe(Results.SUCCESS);
    expect(r.git.stdio).toMatch(/\nhgit clean -f -f -d -x\n/);
    expect(r.git.patch).toBeUndefined();
    expect(r.show.stdio).toMatch(/^oone\nobee\n/m);
    expect(existsSync(join(workdir(), '.buildbot-patched'))).toBe(false);
  });

  it('is applied in its subdir at its level', async () => {
    const r = await run({ body: patchSub, level: 0, subdir: 'sub' });
    expect(r.build.results).toBe(Results.SUCCESS);
    expect(r.show.stdio).toMatch(/^oone\nobuzz\n/m);
    expect(existsSync(join(workdir(), 'sub', '.buildbot-patched'))).toBe(true);
  });

  it('fails the step and the build when it does not apply', async () => {
    const r = await run({ body: patchA.replace(/-one/, '-not there'), level: 1 });
    expect(r.ran[0]).toMatchObject({ name: 'git', results: Results.FAILURE });
    expect(r.build.results).toBe(Results.FAILURE);
    expect(r.git.stdio).toMatch(/\nhgit apply --index -p 1 \.buildbot-diff\n/);
  });
});

describe('a Try_Jobdir scheduler', () => {
  const job = (jobid: string, builderNames: string[], patch: string) => ({
    jobid,
    branch: 'main',
    baserev: gitIn(src, 'rev-parse', 'HEAD'),
    patch_level: 1,
    patch_body: patch,
    repository: `file://${src}`,
    project: 'proj',
    who: 'alice',
    comment: 'try it',
    builderNames,
    properties: { flavour: 'tried' },
  });
  const buildsetOf = (jobid: string) =>
    eventually(
      () => stage.db.pool.query(sql`SELECT id FROM buildsets WHERE external_idstring = ${jobid}`),
      (rows) => rows.length === 1,
      { timeoutMs: 30_000 },
    ).then((rows) => rows[0].id as number);

  it('builds the patch of a job buildbot tryserver delivers, on the builders it names, shown in the API', async () => {
    deliverTryJobs(jobdir, [job('job-1', ['patch-agent', 'patch-bbw'], patchA)]);
    const bsid = await buildsetOf('job-1');
    const requests = await stage.db.pool.query(
      sql`SELECT id FROM buildrequests WHERE buildsetid = ${bsid} ORDER BY id`,
    );
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      const build = await finishedBuild(stage, r.id, 90_000);
      expect(build.results).toBe(Results.SUCCESS);
      expect((await logs(stage, build.id, 'show')).stdio).toMatch(/^otwo\nobee\n/m);
      expect((await logs(stage, build.id, 'git')).patch).toBe(patchA.trimEnd());
    }
    expect(readdirSync(join(jobdir, 'new'))).toEqual([]);
    expect(readdirSync(join(jobdir, 'cur'))).toHaveLength(1);

    const api = await apiOn(stage);
    try {
      const set = (await api.get(`/buildsets/${bsid}`)).json().buildsets[0];
      expect(set.reason).toBe("'try' job by user alice");
      expect(set.external_idstring).toBe('job-1');
      const patch = { body: patchA, level: 1, subdir: '', author: 'alice', comment: 'try it' };
      expect(set.sourcestamps).toEqual([
        expect.objectContaining({
          branch: 'main',
          project: 'proj',
          codebase: '',
          patch: expect.objectContaining(patch),
        }),
      ]);
      const ssid = set.sourcestamps[0].ssid;
      const stamp = (await api.get(`/sourcestamps/${ssid}`)).json().sourcestamps[0];
      expect(stamp.patch).toEqual({ patchid: expect.any(Number), ...patch });
      const props = await stage.db.pool.query(sql`SELECT property_value FROM buildset_properties
        WHERE buildsetid = ${bsid} AND property_name = 'flavour'`);
      expect(JSON.parse(props[0].property_value)).toEqual(['tried', 'try build']);
    } finally {
      await api.close();
    }
  }, 180_000);

  it('refuses a job naming a builder not its own, and one whose patch is not UTF-8, building nothing', async () => {
    // Both in one Python process: its start (Buildbot's imports) costs more than a job.
    deliverTryJobs(jobdir, [
      job('job-2', ['patch-agent', 'elsewhere'], patchA),
      // Latin-1 bytes: tryclient writes them as version 6 (base64).
      job('job-3', ['patch-agent'], `${patchA}# caf\u00e9\n`),
    ]);
    await eventually(
      async () => readdirSync(join(jobdir, 'new')),
      (left) => left.length === 0,
      { timeoutMs: 30_000 },
    );
    expect(readdirSync(join(jobdir, 'cur'))).toHaveLength(3);
    const made = await stage.db.pool.query(
      sql`SELECT id FROM buildsets WHERE external_idstring IN ('job-2', 'job-3')`,
    );
    expect(made).toEqual([]);
  });
});
