// Buildbot's step kinds of issue 31 §2 in real builds: warning_counting_shell, compile, test
// (warning counting, suppressions, maxWarnCount, the `warnings (N)` log, the warnings-count
// property), shell_sequence, master_shell (on the master: its headers, its environment, its
// limits), set_property_value, make_directory, copy_directory and remove_directory, on a
// real Flotilla agent and a real buildbot-worker 3.7 (the real-workers harness), each checked
// for Buildbot's step names, results, state strings and logs as Buildbot 3.7's source gives
// them (buildbot/steps/shell.py, master.py, worker.py) and for what it did on the worker.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { finishedBuild, logs, property, ranBuild, request } from './lib.js';
import { realWorkersSuite } from './real-workers.js';

// What the "compiler" prints: make's directory lines, warnings with file and line, one of
// them suppressed by the file (any file under a gen directory: Buildbot joins make's
// directories, absolute as they are, with '/'), one by the list (line 7 of a.c).
const COMPILER = [
  'echo "make[1]: Entering directory \'/w/src\'"',
  'echo "a.c:3: warning: unused variable x"',
  'echo "a.c:7: warning: implicit declaration"',
  'echo "make[2]: Entering directory \'/w/src/gen\'"',
  'echo "b.c:1: warning: generated code"',
  'echo "make[2]: Leaving directory \'/w/src/gen\'"',
  'echo "b.c:9: warning: shadowed y"',
  'echo "make[1]: Leaving directory \'/w/src\'"',
  'echo "all done"',
].join('\n');

const builder = (worker: string) => `
  - name: kinds-${worker}
    workers: [${worker}]
    steps:
      - { type: string_download, s: ${JSON.stringify(`${COMPILER}\n`)}, workerdest: cc.sh }
      - { type: string_download, s: "# generated code\\n.*/gen/.* : .*\\n", workerdest: supp.txt }
      - { type: string_download, s: "echo 'Warning: flaky'\\n", workerdest: t.sh }
      - { type: string_download, s: "echo one WARNING: x; echo fine\\n", workerdest: w.sh }
      - { type: make_directory, dir: build/out/deep }
      - type: compile
        command: [sh, cc.sh]
        warningPattern: "^(.*?):([0-9]+): [Ww]arning: (.*)$"
        warningExtractor: regexp_groups
        directoryEnterPattern: "Entering directory '(.*)'"
        suppressionFile: supp.txt
        suppressionList: [[null, "implicit", 7, 7]]
      - { type: test, command: [sh, t.sh], maxWarnCount: 0 }
      - { type: warning_counting_shell, command: [sh, w.sh] }
      - { type: set_property_value, property: stage, value: "%(prop:buildername)s-done" }
      - { type: set_property_value, name: set count, property: count, value: 3 }
      - { type: copy_directory, src: build/out, dest: copies/out }
      - { type: remove_directory, dir: copies/out/deep }
      - type: shell_sequence
        name: seq
        commands:
          - { command: "echo one", logname: first }
          - { command: "exit 1", logname: first, flunkOnFailure: false, warnOnFailure: true }
          - { command: "echo in no log" }
          - { command: [sh, -c, "echo two; exit 2"], logname: second, haltOnFailure: true }
          - { command: "echo never", logname: never }
      - { type: master_shell, command: [sh, -c, 'echo "on master $FOO"; env'], env: { FOO: "%(prop:buildername)s" } }
      - { type: master_shell, name: exits, command: "exit 3", haltOnFailure: false }
      - { type: master_shell, name: silent, command: "sleep 60", timeout: 0.5, haltOnFailure: false }
      - { type: compile, name: missing, command: "true", suppressionFile: nope.txt, haltOnFailure: false }
      - { type: make_directory, dir: build/cc.sh/under-a-file }
      - { type: shell, name: never, command: "true" }
`;

// Buildbot's builder and global settings: env, defaultProperties, workerbuilddir, c['properties'].
const settings = (worker: string) => `
  - name: settings-${worker}
    workers: [${worker}]
    workerbuilddir: dirs/settings-${worker}
    env: { FROM_BUILDER: "b-%(prop:buildername)s", BOTH: builder }
    properties: { fromBuilder: 1 }
    defaultProperties: { site: fallback, region: eu, fromBuilder: 2, only: default }
    steps:
      - { type: shell, name: env, command: 'echo "$FROM_BUILDER $BOTH"', env: { BOTH: step } }
      - { type: set_property, name: where, command: pwd, property: where }
`;

const CONFIG = `
log_compression: none
properties: { site: global-site, region: global }
workers: [{ name: agent, password: pw }, { name: bbw, password: pw }]
builders:
${builder('agent')}
${builder('bbw')}
${settings('agent')}
${settings('bbw')}
`;

const suite = realWorkersSuite('flotilla-buildbot-steps-', CONFIG, ['kinds-bbw', 'dirs/settings-bbw']);

/** A build's properties with their sources. */
async function sources(buildid: number): Promise<Record<string, [unknown, string]>> {
  const rows = await suite.stage.db.pool.query(
    sql`SELECT name, value, source FROM build_properties WHERE buildid = ${buildid}`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, [JSON.parse(r.value), r.source]]));
}

describe.each(['agent', 'bbw'])("Buildbot's step kinds on %s", (worker) => {
  it('count warnings, set properties and work on directories as Buildbot 3.7 does', async () => {
    const { build, ran } = await ranBuild(suite.stage, `kinds-${worker}`);
    expect(ran.map((s) => [s.name, s.results, s.state_string])).toEqual([
      ['string_download', Results.SUCCESS, 'downloading to cc.sh'],
      ['string_download_1', Results.SUCCESS, 'downloading to supp.txt'],
      ['string_download_2', Results.SUCCESS, 'downloading to t.sh'],
      ['string_download_3', Results.SUCCESS, 'downloading to w.sh'],
      ['MakeDirectory', Results.SUCCESS, 'Created'],
      ['compile', Results.WARNINGS, 'compile (warnings)'],
      ['test', Results.FAILURE, 'test (failure)'],
      ['generic', Results.WARNINGS, "'sh w.sh' (warnings)"],
      ['SetProperty', Results.SUCCESS, 'Set'],
      ['set count', Results.SUCCESS, 'Set'],
      ['CopyDirectory', Results.SUCCESS, 'Copied build/out to copies/out'],
      ['RemoveDirectory', Results.SUCCESS, 'Deleted'],
      ['seq', Results.FAILURE, "'sh -c ...' (failure)"],
      ['MasterShellCommand', Results.SUCCESS, 'Ran'],
      ['exits', Results.FAILURE, 'failed (3) (failure)'],
      ['silent', Results.FAILURE, 'killed (9) (failure)'],
      ['missing', Results.FAILURE, 'compile (failure)'],
      ['MakeDirectory_1', Results.FAILURE, 'Create failed. (failure)'],
    ]);
    // Test flunks on failure as any step; MakeDirectory halts the build.
    expect(build.results).toBe(Results.FAILURE);
    expect(build.state_string).toBe(
      "failed test (failure) 'sh -c ...' (failure) failed (3) (failure) killed (9) (failure) compile (failure) Create failed. (failure)",
    );

    const compiled = await logs(suite.stage, build.id, 'compile');
    expect(Object.keys(compiled)).toEqual(['stdio', 'warnings (2)']);
    expect(compiled['warnings (2)']).toBe('a.c:3: warning: unused variable x\nb.c:9: warning: shadowed y');
    expect(Object.keys(await logs(suite.stage, build.id, 'test'))).toEqual(['stdio', 'warnings (1)']);
    // ShellSequence: each command into the log it names, none without a name, none after a halt.
    const seq = await logs(suite.stage, build.id, 'seq');
    expect(Object.keys(seq)).toEqual(['first', 'second']);
    expect(seq.first).toMatch(/^oone$/m);
    expect(seq.second).toMatch(/^otwo$/m);
    expect(Object.values(seq).join('')).not.toMatch(/in no log/);
    // MasterShellCommand: Buildbot's headers, the step's env and none of the master's own.
    const onMaster = (await logs(suite.stage, build.id, 'MasterShellCommand')).stdio!;
    expect(onMaster).toMatch(/^h\*\* RUNNING ON BUILDMASTER \*\*$/m);
    expect(onMaster).toMatch(new RegExp(`^oon master kinds-${worker}$`, 'm'));
    expect(onMaster).toMatch(/^oPATH=/m);
    expect(onMaster).not.toMatch(/DATABASE_URL|REDIS_URL/);
    expect((await logs(suite.stage, build.id, 'silent')).stdio).toMatch(
      /command timed out: 0.5 seconds without output/,
    );
    // The suppression file that cannot be read fails the step before its command: no log.
    expect(await logs(suite.stage, build.id, 'missing')).toEqual({});
    // No logs for the directory steps and SetProperty, as Buildbot's.
    expect(await logs(suite.stage, build.id, 'CopyDirectory')).toEqual({});
    expect(await logs(suite.stage, build.id, 'SetProperty')).toEqual({});

    expect(await property(suite.stage, build.id, 'warnings-count')).toBe(4);
    expect(await property(suite.stage, build.id, 'stage')).toBe(`kinds-${worker}-done`);
    expect(await property(suite.stage, build.id, 'count')).toBe(3);

    const base = join(suite.root, worker, `kinds-${worker}`);
    expect(existsSync(join(base, 'build', 'out', 'deep'))).toBe(true);
    expect(existsSync(join(base, 'copies', 'out'))).toBe(true);
    expect(existsSync(join(base, 'copies', 'out', 'deep'))).toBe(false);
    expect(readFileSync(join(base, 'build', 'cc.sh'), 'utf8')).toContain('make[1]');
  }, 120_000);
  it("takes the builder's env, defaultProperties and workerbuilddir and the global properties as Buildbot", async () => {
    const { brid } = await request(suite.stage, `settings-${worker}`, [{}], { region: ['asked', 'Force'] });
    const build = await finishedBuild(suite.stage, brid, 90_000);
    expect(build.results).toBe(Results.SUCCESS);
    // The builder's env under the step's, rendered for the build.
    expect((await logs(suite.stage, build.id, 'env')).stdio).toMatch(
      new RegExp(`^ob-settings-${worker} step$`, 'm'),
    );
    const base = join(suite.root, worker, 'dirs', `settings-${worker}`);
    expect(await property(suite.stage, build.id, 'where')).toBe(join(base, 'build'));
    // The harness's agent does not say its base directory, so only buildbot-worker's build has builddir.
    expect(await property(suite.stage, build.id, 'builddir')).toBe(worker === 'bbw' ? base : undefined);
    expect(await sources(build.id)).toMatchObject({
      site: ['global-site', 'master.cfg'], // global: defaultProperties do not replace it
      region: ['asked', 'Force'], // the build set's over the global one
      fromBuilder: [1, 'Builder'], // properties over defaultProperties
      only: ['default', 'Builder'],
    });
  }, 120_000);
});
