// The git step (Buildbot's Git source step) on real git: repositories the test makes,
// reached over file:// and over a git daemon on 127.0.0.1; commands run for real on a local
// worker (the agent's own command runner) by an in-process master. Checked: clone then fetch
// (incremental), full with clobber (shallow), fresh and copy, submodules, several codebases
// with got_revision by codebase, and a codebase the build does not have.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Results } from '../../../services/core/results.js';
import { runCommand } from '../../../services/worker/command.js';
import { freePort, type Running, start } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';
import { type InProcessMaster, interrupted, type Script, ScriptedWorker, Stage } from '../in-process.js';
import { finishedBuild, gitIn, logs, property, request, steps } from './lib.js';

const root = mkdtempSync(join(tmpdir(), 'flotilla-git-'));
const workerDir = join(root, 'worker');
const sh = gitIn;

/** A repository (with a bare copy under served/ for the daemon) and a commit helper. */
function repo(name: string): { dir: string; url: string; commit: (file: string, text: string) => string } {
  const dir = join(root, 'src', name);
  mkdirSync(dir, { recursive: true });
  sh(dir, 'init', '-q', '--initial-branch=main');
  const commit = (file: string, text: string) => {
    writeFileSync(join(dir, file), text);
    sh(dir, 'add', '-A');
    sh(dir, 'commit', '-qm', `${file}`);
    return sh(dir, 'rev-parse', 'HEAD');
  };
  return { dir, url: `file://${dir}`, commit };
}

/** A worker that runs each command for real, in its own directory, as the agent does. */
const realCommands: Script = async (cmd) => {
  const writes: Promise<void>[] = [];
  const r = runCommand({ ...cmd.request, workdir: join(workerDir, cmd.request.workdir) }, (s, t) => {
    writes.push(cmd.write(s, t));
  });
  const stop = () => r.interrupt(String(cmd.signal.reason));
  cmd.signal.addEventListener('abort', stop, { once: true });
  const outcome = await Promise.race([r.result, interrupted(cmd.signal).then(() => r.result)]);
  cmd.signal.removeEventListener('abort', stop);
  await Promise.all(writes);
  return outcome;
};

const app = repo('app');
const lib = repo('lib');
const sub = repo('sub');
let daemon: Running;
let daemonUrl: string;
let stage: Stage;
let m: InProcessMaster;

function config(): string {
  return `
log_compression: none
workers: [{ name: w1, password: x, max_builds: 2 }]
builders:
  - name: incremental
    workers: [w1]
    steps:
      - { type: git, repourl: "${app.url}" }
      - { type: shell, name: show, command: "cat a.txt" }
  - name: shallow
    workers: [w1]
    steps:
      - { type: git, repourl: "${daemonUrl}/app.git", mode: full, method: clobber, shallow: true }
  - name: fresh
    workers: [w1]
    steps:
      - { type: git, mode: full, method: fresh }
  - name: copy
    workers: [w1]
    steps:
      - { type: git, mode: full, method: copy, repourl: "${app.url}" }
  - name: subs
    workers: [w1]
    steps:
      # git refuses file:// submodules unless told (Buildbot's config: git -c before each command).
      - type: git
        repourl: "${lib.url}"
        mode: full
        method: clobber
        submodules: true
        config: { protocol.file.allow: always }
  - name: multi
    workers: [w1]
    steps:
      - { type: git, codebase: app, workdir: app }
      - { type: git, codebase: lib, workdir: lib, repourl: "%(src:lib:repository)s" }
`;
}

beforeAll(async () => {
  app.commit('a.txt', 'one\n');
  writeFileSync(join(app.dir, '.gitignore'), 'ignored.txt\n');
  app.commit('.gitignore', 'ignored.txt\n');
  sub.commit('s.txt', 'from the submodule\n');
  lib.commit('l.txt', 'lib\n');
  sh(lib.dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.url, 'sub');
  sh(lib.dir, 'commit', '-qm', 'submodule');
  const served = join(root, 'served');
  mkdirSync(served);
  sh(root, 'clone', '-q', '--bare', app.dir, join(served, 'app.git'));
  const port = await freePort();
  daemon = start(
    'git',
    [
      'daemon',
      '--reuseaddr',
      '--export-all',
      `--base-path=${served}`,
      '--listen=127.0.0.1',
      `--port=${port}`,
      served,
    ],
    {},
  );
  daemonUrl = `git://127.0.0.1:${port}`;
  await waitFor(
    'the git daemon',
    () =>
      new Promise<boolean>((resolve) => {
        const s = createConnection(port, '127.0.0.1', () => {
          s.end();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      }),
  );
  stage = await Stage.open();
  m = await stage.master('git', config(), { env: { GIT_ALLOW_PROTOCOL: 'file:git' } });
  m.workers.connect(new ScriptedWorker('w1', realCommands));
}, 60_000);
afterAll(async () => {
  await m?.stop();
  await stage?.close();
  await daemon?.stop('SIGTERM', 5000);
  rmSync(root, { recursive: true, force: true });
});

const head = (dir: string) => sh(dir, 'rev-parse', 'HEAD');

describe('the git step', () => {
  it('incremental: clones into an empty workdir, then fetches the next revision', async () => {
    const first = head(app.dir);
    const b1 = await finishedBuild(
      stage,
      (await request(stage, 'incremental', [{ repository: app.url, revision: first }])).brid,
    );
    expect(b1.results).toBe(Results.SUCCESS);
    expect(await property(stage, b1.id, 'got_revision')).toBe(first);
    expect((await steps(stage, b1.id)).map((s) => [s.name, s.state_string])).toEqual([
      ['worker_preparation', 'worker w1 ready'],
      ['git', 'update'],
      ['show', "'cat a.txt'"],
    ]);
    expect((await logs(stage, b1.id, 'git')).stdio).toMatch(
      /\nhgit clone --branch main file:\/\/\S+ \. --progress\n/,
    );

    const second = app.commit('a.txt', 'two\n');
    const b2 = await finishedBuild(
      stage,
      (await request(stage, 'incremental', [{ repository: app.url, revision: second }])).brid,
    );
    expect(b2.results).toBe(Results.SUCCESS);
    expect(await property(stage, b2.id, 'got_revision')).toBe(second);
    const log = (await logs(stage, b2.id, 'git')).stdio;
    expect(log).toMatch(/\nhgit fetch -f -t file:\/\/\S+ main --progress\n/);
    expect(log).not.toMatch(/git clone/);
    // In the order the command wrote it: its header, its output, its end.
    expect((await logs(stage, b2.id, 'show')).stdio).toMatch(
      /^hcat a\.txt\n(h.*\n)*otwo\nhprogram finished with exit code 0\nhelapsedTime=[\d.]+$/,
    );
  });

  it('full/clobber with shallow, over a git daemon: a clone of depth 1', async () => {
    const b = await finishedBuild(stage, (await request(stage, 'shallow', [{ revision: null }])).brid);
    expect(b.results).toBe(Results.SUCCESS);
    const dir = join(workerDir, 'shallow', 'build');
    expect(sh(dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(await property(stage, b.id, 'got_revision')).toBe(head(join(root, 'served', 'app.git')));
  });

  it('full/fresh: what the last build left, ignored files too, is cleaned away', async () => {
    const stamp = [{ repository: app.url, revision: head(app.dir) }];
    expect((await finishedBuild(stage, (await request(stage, 'fresh', stamp)).brid)).results).toBe(0);
    const dir = join(workerDir, 'fresh', 'build');
    writeFileSync(join(dir, 'ignored.txt'), 'x');
    writeFileSync(join(dir, 'untracked.txt'), 'x');
    const b = await finishedBuild(stage, (await request(stage, 'fresh', stamp)).brid);
    expect(b.results).toBe(0);
    expect((await logs(stage, b.id, 'git')).stdio).toMatch(/\nhgit clean -f -f -d -x\n/);
    expect(existsSync(join(dir, 'ignored.txt')) || existsSync(join(dir, 'untracked.txt'))).toBe(false);
  });

  it('full/copy: updates source/, then copies it to the workdir', async () => {
    const b = await finishedBuild(stage, (await request(stage, 'copy', [{ revision: head(app.dir) }])).brid);
    expect(b.results).toBe(0);
    expect(head(join(workerDir, 'copy', 'source'))).toBe(head(app.dir));
    expect(head(join(workerDir, 'copy', 'build'))).toBe(head(app.dir));
  });

  it('checks out submodules', async () => {
    const b = await finishedBuild(stage, (await request(stage, 'subs', [{ revision: head(lib.dir) }])).brid);
    expect(b.results).toBe(0);
    expect(existsSync(join(workerDir, 'subs', 'build', 'sub', 's.txt'))).toBe(true);
  });

  it('several codebases: each step takes its own, got_revision is a dict by codebase', async () => {
    const b = await finishedBuild(
      stage,
      (
        await request(stage, 'multi', [
          { codebase: 'app', repository: app.url, revision: head(app.dir) },
          { codebase: 'lib', repository: lib.url, revision: head(lib.dir) },
        ])
      ).brid,
    );
    expect(b.results).toBe(0);
    expect((await steps(stage, b.id)).map((s) => [s.name, s.state_string])).toEqual([
      ['worker_preparation', 'worker w1 ready'],
      ['git-app', 'update app'],
      ['git-lib', 'update lib'],
    ]);
    expect(await property(stage, b.id, 'got_revision')).toEqual({ app: head(app.dir), lib: head(lib.dir) });
  });

  it('a codebase the build does not have fails the step', async () => {
    const b = await finishedBuild(
      stage,
      (await request(stage, 'multi', [{ codebase: 'app', repository: app.url, revision: null }])).brid,
    );
    expect(b.results).toBe(Results.FAILURE);
    const s = await steps(stage, b.id);
    expect(s.map((x) => [x.name, x.results, x.state_string])).toEqual([
      ['worker_preparation', 0, 'worker w1 ready'],
      ['git-app', 0, 'update app'],
      ['git-lib', Results.FAILURE, 'Codebase lib not in build'],
    ]);
    expect(await logs(stage, b.id, 'git-lib')).toEqual({
      log: "No sourcestamp found in build for codebase 'lib'",
    });
  });
});
