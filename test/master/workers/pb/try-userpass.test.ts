// Buildbot's Try_Userpass on a Flotilla master (services/master/workers/pb/try-userpass.ts,
// try-status.ts): Debian's own `buildbot try --connect=pb` (a real process, with `--diff`
// and `--baserev`, so no checkout is scanned) logs in on the master's PB port, the workers'
// port; the patched build runs on a real buildbot-worker made by plain create-worker (PB) and
// shows in the REST API with its patch. `--wait` prints each builder's result as against
// Buildbot; a wrong password, a builder not the scheduler's and a disabled scheduler build
// nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../../../services/core/config/master-config.js';
import { sql } from '../../../../services/core/db/pool.js';
import { Results } from '../../../../services/core/results.js';
import { listenForWorkers } from '../../../../services/master/workers/listen.js';
import { RemoteFailure, Tuple } from '../../../../services/master/workers/pb/jelly.js';
import { tryJobOf, tryReason } from '../../../../services/master/workers/pb/try-userpass.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../../helpers/buildbot-worker.js';
import { capturedLog } from '../../../helpers/log-lines.js';
import { freePort, type Running, start } from '../../../helpers/processes.js';
import { eventually } from '../../../helpers/wait.js';
import { apiOn, finishedBuild, gitIn, logs } from '../../builds/lib.js';
import { Stage } from '../../in-process.js';

const captured = capturedLog('info');
const root = mkdtempSync(join(tmpdir(), 'flotilla-try-userpass-'));
const src = join(root, 'src');
let stage: Stage;
let port: number;
let worker: Running;
let patch: string;
let baserev: string;

const config = () => `
log_compression: none
protocols: { pb: { port: 0 } }
workers: [{ name: w1, password: pw }]
builders:
  - name: b1
    workers: [w1]
    steps:
      - { type: git, repourl: "file://${src}", mode: incremental }
      - { type: shell, name: show, command: "cat a.txt" }
  - { name: b2, workers: [w1], steps: [{ type: shell, command: 'exit 1' }] }
  - { name: other, workers: [w1], steps: [{ type: shell, command: 'true' }] }
schedulers:
  # Buildbot's spelling of the builders, as a master.cfg moved over keeps it.
  - { type: try_userpass, name: try-pb, builderNames: [b1, b2], userpass: [[alice, s3cret]] }
`;

beforeAll(async () => {
  gitIn(root, 'init', '-q', '--initial-branch=main', src);
  writeFileSync(join(src, 'a.txt'), 'one\n');
  gitIn(src, 'add', '-A');
  gitIn(src, 'commit', '-qm', 'first');
  baserev = gitIn(src, 'rev-parse', 'HEAD');
  writeFileSync(join(src, 'a.txt'), 'two\n');
  patch = `${gitIn(src, 'diff')}\n`;
  gitIn(src, 'checkout', '-q', '.');
  writeFileSync(join(root, 'patch.diff'), patch);
  stage = await Stage.open();
  port = await freePort();
  const yaml = config();
  await stage.master('m-try', yaml, {
    listenForWorkers: (events) =>
      listenForWorkers({
        config: parseMasterConfig(yaml),
        host: '127.0.0.1',
        workerPort: 0,
        pbPort: port,
        masterName: 'm-try',
        log: captured.log,
        events,
        env: {},
      }),
  });
  const dir = join(root, 'w1');
  createBuildbotWorker({ dir, port, name: 'w1', password: 'pw', protocol: 'pb' });
  worker = startBuildbotWorker(dir);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

/** `buildbot try --connect=pb` against the master's PB port (HOME empty: no ~/.buildbot/options). */
function buildbotTry(args: string[]): Running {
  return start(
    'buildbot',
    ['try', '--connect=pb', '--master', `127.0.0.1:${port}`, '--vc', 'git', ...args],
    { HOME: root },
    { cwd: root },
  );
}

const tryArgs = (user: string, pass: string, ...builders: string[]) => [
  '--username',
  user,
  '--passwd',
  pass,
  '--branch',
  'main',
  '--baserev',
  baserev,
  '--diff',
  join(root, 'patch.diff'),
  '-p',
  '1',
  '--who',
  'alice',
  '--comment',
  'try it',
  '--property',
  'flavour=tried',
  ...builders.flatMap((b) => ['--builder', b]),
];

const buildsetsBy = (reasonLike: string) =>
  stage.db.pool.query(sql`SELECT id, reason FROM buildsets WHERE reason LIKE ${reasonLike} ORDER BY id`);

describe('buildbot try --connect=pb', () => {
  it('lists the scheduler’s builders with --get-builder-names', async () => {
    const p = buildbotTry(['--username', 'alice', '--passwd', 's3cret', '--get-builder-names']);
    expect(await p.exited, p.output()).toBe(0);
    expect(p.output()).toMatch(/available for the try scheduler: \nb1\nb2\n/);
  });

  it('builds the patch on the builder it names, shown in the API', async () => {
    const p = buildbotTry(tryArgs('alice', 's3cret', 'b1'));
    const code = await p.exited;
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/job has been delivered/);
    const [set] = await buildsetsBy("'try' job by user alice (try it)");
    expect(set).toBeDefined();
    const [req] = await stage.db.pool.query(
      sql`SELECT id FROM buildrequests WHERE buildsetid = ${set.id} ORDER BY id`,
    );
    const build = await finishedBuild(stage, req.id, 90_000);
    expect(build.results).toBe(Results.SUCCESS);
    expect((await logs(stage, build.id, 'show')).stdio).toMatch(/^otwo\n/m);
    expect((await logs(stage, build.id, 'git')).patch).toBe(patch.trimEnd());
    const api = await apiOn(stage);
    try {
      const bs = (await api.get(`/buildsets/${set.id}`)).json().buildsets[0];
      const expected = { body: patch, level: 1, subdir: '', author: 'alice', comment: 'try it' };
      expect(bs.sourcestamps).toEqual([
        expect.objectContaining({
          branch: 'main',
          revision: baserev,
          codebase: '',
          patch: expect.objectContaining(expected),
        }),
      ]);
      const props = (await api.get(`/buildsets/${set.id}/properties`)).json().properties[0];
      expect(props.flavour).toEqual(['tried', 'try build']);
    } finally {
      await api.close();
    }
  }, 180_000);

  it('with --wait prints each builder’s result and exits 1 when one failed', async () => {
    const p = buildbotTry([...tryArgs('alice', 's3cret', 'b1', 'b2'), '--wait', '--quiet']);
    const code = await p.exited;
    const out = p.output();
    expect(out).toMatch(/All Builds Complete\nb1: success \(build successful\)\nb2: failure \(failed/);
    expect(code, out).toBe(1);
  }, 180_000);

  it('refuses a wrong password and a builder not the scheduler’s, building nothing', async () => {
    const before = (await buildsetsBy("'try' job%")).length;
    const wrong = buildbotTry(tryArgs('alice', 'nope', 'b1'));
    // tryclient prints the refused login as a RemoteError, then waits on its reactor until
    // killed (its run_impl stops the reactor only on success).
    await eventually(
      async () => wrong.output(),
      (out) => /RemoteError/.test(out) || wrong.child.exitCode !== null,
      { timeoutMs: 30_000 },
    );
    await wrong.stop();
    expect(wrong.output()).toMatch(/deliver_job_pb[\s\S]*RemoteError/);
    expect(captured.lines.some((l) => String(l.msg).includes('refused') && l.user === 'alice')).toBe(true);
    const foreign = buildbotTry([...tryArgs('alice', 's3cret', 'b1', 'other'), '--wait']);
    expect(await foreign.exited, foreign.output()).toBe(0);
    expect(foreign.output()).toMatch(/try scheduler on the master does not have the builder configured/);
    expect(await buildsetsBy("'try' job%")).toHaveLength(before);
    // A disabled scheduler (the REST API's enable control) takes no try.
    await stage.db.pool.query(sql`UPDATE schedulers SET enabled = 0 WHERE name = 'try-pb'`);
    const disabled = buildbotTry([...tryArgs('alice', 's3cret', 'b1'), '--wait']);
    expect(await disabled.exited, disabled.output()).toBe(0);
    expect(disabled.output()).toMatch(/does not have the builder configured/);
    await stage.db.pool.query(sql`UPDATE schedulers SET enabled = 1 WHERE name = 'try-pb'`);
    expect(await buildsetsBy("'try' job%")).toHaveLength(before);
  }, 60_000);
});

describe('a try’s arguments (pure)', () => {
  const args = (patch: unknown, over: Record<number, unknown> = {}) => {
    const a: unknown[] = ['main', 'abc', patch, 'r', 'p', ['b1'], 'me', 'why', new Map([['k', 'v']])];
    for (const [i, v] of Object.entries(over)) a[Number(i)] = v;
    return a as Parameters<typeof tryJobOf>[0];
  };

  it('reads them as perspective_try does', () => {
    const job = tryJobOf(args(new Tuple(1, Buffer.from('diff\n'))));
    // In perspective_try's order of arguments (the patch as level and text).
    const read = [job.branch, job.baserev, [job.patchLevel, job.patchBody], job.repository, job.project];
    expect(read).toEqual(['main', 'abc', [1, 'diff\n'], 'r', 'p']);
    expect([job.builderNames, job.who, job.comment, job.properties]).toEqual([
      ['b1'],
      'me',
      'why',
      { k: 'v' },
    ]);
    expect(tryReason(job)).toBe("'try' job by user me (why)");
    expect(tryReason({ who: '', comment: '' })).toBe("'try' job");
    expect([...tryReason({ who: 'x', comment: 'y'.repeat(400) })]).toHaveLength(256);
  });

  it.each([
    ['a patch not (level, diff)', args('diff'), /not \(level, diff\)/],
    ['a negative level', args(new Tuple(-1, 'd')), /not \(level, diff\)/],
    ['a patch not UTF-8', args(new Tuple(1, Uint8Array.of(0xff))), /not UTF-8/],
    ['a patch over the bound', args(new Tuple(1, 'x'.repeat(1024 * 1024 + 1))), /longer than|over/],
    ['a branch too long', args(new Tuple(1, 'd'), { 0: 'b'.repeat(257) }), /branch is longer than 256/],
    ['builders not names', args(new Tuple(1, 'd'), { 5: [1] }), /builderNames/],
    ['properties not a dictionary', args(new Tuple(1, 'd'), { 8: ['x'] }), /properties/],
  ])('refuses %s', (_what, a, message) => {
    // A RemoteFailure (what the client is answered), not an Error.
    let thrown: unknown;
    try {
      tryJobOf(a);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(RemoteFailure);
    expect((thrown as RemoteFailure).value).toMatch(message);
  });
});
