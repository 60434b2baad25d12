// Buildbot's interpolation, conditions and step shape on a real build (in-process master,
// real database, scripted worker): secrets from the environment and from a directory,
// redacted from log lines and state strings; src/worker/kw substitutions; doStepIf,
// hideStepIf and alwaysRun on property conditions; decodeRC with warnOnWarnings and
// flunkOnWarnings; logfiles and lazylogfiles; a template that cannot render.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Results } from '../../../services/core/results.js';
import { type InProcessMaster, ScriptedWorker, Stage } from '../in-process.js';
import { finishedBuild, logs, request, steps } from './lib.js';

const secretsDir = mkdtempSync(join(tmpdir(), 'flotilla-secrets-'));
writeFileSync(join(secretsDir, 'deploy-key'), 'k3y-from-a-file\n');
chmodSync(join(secretsDir, 'deploy-key'), 0o600);

const CONFIG = `
log_compression: none
secrets:
  - { type: environment, prefix: TEST_SECRET_ }
  - { type: directory, dirname: ${JSON.stringify(secretsDir)} }
workers:
  - { name: w1, password: x, max_builds: 4 }
builders:
  - name: secrets
    workers: [w1]
    steps:
      - type: shell
        name: use
        command: ["echo", "token=%(secret:token)s"]
        env: { KEY: "%(secret:deploy-key)s" }
      - { type: shell, name: again, command: "echo %(secret:token)s and %(secret:deploy-key)s >&2" }
  - name: shapes
    workers: [w1]
    properties: { deploy: false, flavour: fast, level: 2 }
    steps:
      - { type: shell, name: skipped, command: "echo no", doStepIf: { property: deploy } }
      - type: shell
        name: hidden
        command: "echo no"
        doStepIf: { property: flavour, equals: slow }
        hideStepIf: { results: [skipped] }
      - type: shell
        name: vars
        command: { interpolate: "echo %(src::branch)s %(src:lib:revision)s %(worker:host)s %(kw:who)s %(prop:missing:-none)s", kw: { who: me } }
      - { type: shell, name: warns, command: "exit 1", decodeRC: { 0: success, 1: warnings }, warnOnWarnings: true }
      - { type: shell, name: ignored, command: "exit 3", decodeRC: { 3: warnings } }
      - type: shell
        name: cond
        command: "echo level"
        doStepIf: { all: [{ property: level, in: [1, 2] }, { not: { property: deploy } }] }
  - name: flunks
    workers: [w1]
    steps:
      - { type: shell, name: warns, command: "exit 1", decodeRC: { 1: warnings }, flunkOnWarnings: true }
      - { type: shell, name: next, command: "echo next" }
  - name: always
    workers: [w1]
    properties: { cleanup: true }
    steps:
      - { type: shell, name: fails, command: "exit 2", haltOnFailure: true }
      - { type: shell, name: skipped-after, command: "echo x" }
      - { type: shell, name: cleanup, command: "echo cleaning", alwaysRun: { property: cleanup } }
      - { type: shell, name: not-always, command: "echo x", alwaysRun: { property: nope } }
  - name: logfiles
    workers: [w1]
    steps:
      - type: shell
        name: eager
        command: "log a.log first; echo out"
        logfiles: { a.log: a.txt, empty.log: { filename: b.txt, follow: true } }
      - type: shell
        name: lazy
        command: "log a.log first"
        logfiles: { a.log: a.txt, empty.log: b.txt }
        lazylogfiles: true
  - name: broken
    workers: [w1]
    steps:
      - { type: shell, name: nosecret, command: "echo %(secret:missing)s" }
`;

let stage: Stage;
let m: InProcessMaster;
let w1: ScriptedWorker;
beforeAll(async () => {
  stage = await Stage.open();
  m = await stage.master('shape', CONFIG, { env: { TEST_SECRET_token: 'hunter2-token' } });
  w1 = m.workers.connect(new ScriptedWorker('w1'));
}, 60_000);
afterAll(async () => {
  await m?.stop();
  await stage?.close();
  rmSync(secretsDir, { recursive: true, force: true });
});

describe('secrets', () => {
  it('reach the worker, and every log line and state string shows <name> instead', async () => {
    const { brid } = await request(stage, 'secrets');
    const build = await finishedBuild(stage, brid);
    expect(build.results).toBe(Results.SUCCESS);
    const use = w1.commands.find((c) => Array.isArray(c.command) && c.command[0] === 'echo')!;
    expect(use.command).toEqual(['echo', 'token=hunter2-token']);
    expect(use.env).toEqual({ KEY: 'k3y-from-a-file' });
    expect((await logs(stage, build.id, 'use')).stdio).toBe('otoken=<token>');
    expect((await logs(stage, build.id, 'again')).stdio).toBe('e<token> and <deploy-key>');
    const [, use1, again] = await steps(stage, build.id);
    expect(use1!.state_string).toBe("'echo token=<token>'");
    expect(again!.state_string).toBe("'echo <token> ...'");
  });

  it('an unknown secret ends the step EXCEPTION with the reason in err.text', async () => {
    const { brid } = await request(stage, 'broken');
    const build = await finishedBuild(stage, brid);
    expect(build.results).toBe(Results.EXCEPTION);
    const [, step] = await steps(stage, build.id);
    expect(step).toMatchObject({
      name: 'nosecret',
      results: Results.EXCEPTION,
      state_string: 'finished (exception)',
    });
    expect(await logs(stage, build.id, 'nosecret')).toEqual({
      'err.text': 'secret key missing is not found in any provider',
    });
  });

  it('a secrets directory that others may read is refused when the master starts', async () => {
    const open = mkdtempSync(join(tmpdir(), 'flotilla-secrets-open-'));
    writeFileSync(join(open, 'x'), 'y');
    chmodSync(join(open, 'x'), 0o644);
    try {
      await expect(
        stage.master('shape-open', `secrets: [{ type: directory, dirname: ${JSON.stringify(open)} }]`),
      ).rejects.toThrow(/permissions 0o644 on file x are too open/);
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });
});

describe('conditions and results', () => {
  it('skips, hides, substitutes and decodes exit codes as Buildbot does', async () => {
    const { brid } = await request(stage, 'shapes', [
      { codebase: '', branch: 'feature' },
      { codebase: 'lib', revision: 'f00d' },
    ]);
    const build = await finishedBuild(stage, brid);
    expect((await steps(stage, build.id)).map((s) => [s.name, s.results, s.state_string, s.hidden])).toEqual([
      ['worker_preparation', 0, 'worker w1 ready', 0],
      ['skipped', Results.SKIPPED, "'echo no' (skipped)", 0],
      ['hidden', Results.SKIPPED, "'echo no' (skipped)", 1],
      ['vars', Results.SUCCESS, "'echo feature ...'", 0],
      ['warns', Results.WARNINGS, "'exit 1' (warnings)", 0],
      ['ignored', Results.WARNINGS, "'exit 3' (warnings)", 0],
      ['cond', Results.SUCCESS, "'echo level'", 0],
    ]);
    expect((await logs(stage, build.id, 'vars')).stdio).toBe('ofeature f00d scripted me none');
    // warnOnWarnings makes the build WARNINGS and names the step; without it, a WARNINGS step
    // leaves the build alone.
    expect(build.results).toBe(Results.WARNINGS);
    expect(build.state_string).toBe("warnings 'exit 1' (warnings)");
  });

  it('flunkOnWarnings fails the build without halting it', async () => {
    const { brid } = await request(stage, 'flunks');
    const build = await finishedBuild(stage, brid);
    expect(build.results).toBe(Results.FAILURE);
    expect((await steps(stage, build.id)).map((s) => s.results)).toEqual([0, Results.WARNINGS, 0]);
  });

  it('alwaysRun on a property condition runs after a halting failure', async () => {
    const { brid } = await request(stage, 'always');
    const build = await finishedBuild(stage, brid);
    expect(build.results).toBe(Results.FAILURE);
    expect((await steps(stage, build.id)).map((s) => s.name)).toEqual([
      'worker_preparation',
      'fails',
      'cleanup',
    ]);
  });
});

describe('logfiles', () => {
  it('each has its log from the start; with lazylogfiles, only once it has text', async () => {
    const { brid } = await request(stage, 'logfiles');
    const build = await finishedBuild(stage, brid);
    expect(build.results).toBe(Results.SUCCESS);
    // Stream logs as Buildbot's: the file's lines are stdout lines.
    expect(await logs(stage, build.id, 'eager')).toEqual({
      stdio: 'oout',
      'a.log': 'ofirst',
      'empty.log': '',
    });
    expect(await logs(stage, build.id, 'lazy')).toEqual({ stdio: '', 'a.log': 'ofirst' });
    const eager = w1.commands.find((c) => c.command === 'log a.log first; echo out')!;
    expect(eager.logfiles).toEqual({
      'a.log': { filename: 'a.txt', follow: false },
      'empty.log': { filename: 'b.txt', follow: true },
    });
    expect(eager.interruptSignal).toBe('KILL');
  });
});
