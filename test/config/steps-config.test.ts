// The steps' configuration: templates checked when the configuration loads (with the key
// that holds a bad one), Buildbot's result names, decodeRC, logfiles and conditions.
import { describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { problems } from './problems.js';

const withSteps = (steps: string) => `
workers: [{ name: w1, password: p }]
builders:
  - name: b1
    workers: [w1]
    steps: ${steps}`;

describe('step configuration', () => {
  it('refuses a bad template where it is, and a keyword the template does not have', () => {
    expect(problems(withSteps('[{ type: shell, command: ["make", "%(prop:a b)s"] }]'))).toEqual([
      "builders[0].steps[0].command[1]: Property name must be alphanumeric for prop Interpolation 'a b'",
    ]);
    expect(
      problems(withSteps('[{ type: shell, command: echo, env: { X: "%(kw:y)s" } }]')).join('\n'),
    ).toMatch(/builders\[0\]\.steps\[0\]\.env\.X/);
    expect(
      problems(withSteps('[{ type: shell, command: { interpolate: "%(kw:y)s", kw: { x: 1 } } }]')).join('\n'),
    ).toMatch(/no keyword 'y'/);
  });

  it('reads decodeRC, logfiles, conditions and signals in Buildbot terms', () => {
    const cfg = parseMasterConfig(
      withSteps(`
      - type: shell
        command: make
        decodeRC: { 0: success, 1: warnings, 2: 4 }
        logfiles: { test.log: out/test.log, tail: { filename: t.log, follow: true } }
        doStepIf: { any: [{ property: a, equals: 1 }, { not: { property: b, exists: true } }] }
        hideStepIf: { results: [skipped, success] }
        interruptSignal: TERM
        sigtermTime: 3`),
    );
    expect(cfg.builders[0]!.steps[0]).toMatchObject({
      decodeRC: { '0': 0, '1': 1, '2': 4 },
      logfiles: {
        'test.log': { filename: 'out/test.log', follow: false },
        tail: { filename: 't.log', follow: true },
      },
      hideStepIf: { results: [3, 0] },
      interruptSignal: 'TERM',
      sigtermTime: 3,
      lazylogfiles: false,
    });
    expect(problems(withSteps('[{ type: shell, command: make, decodeRC: { x: success } }]'))[0]).toMatch(
      /decodeRC\.x: expected an exit code/,
    );
    expect(problems(withSteps('[{ type: shell, command: make, decodeRC: { 0: fine } }]'))[0]).toMatch(
      /expected a result code 0-6 or one of success, warnings/,
    );
    expect(problems(withSteps('[{ type: shell, command: make, interruptSignal: STOP }]'))[0]).toMatch(
      /interruptSignal: expected one of KILL, TERM/,
    );
  });

  it('a secrets provider is one of the known kinds', () => {
    expect(problems('secrets: [{ type: vault }]')[0]).toMatch(/secrets\[0\]/);
    expect(parseMasterConfig('secrets: [{ type: environment }]').secrets).toEqual([
      { type: 'environment', prefix: 'FLOTILLA_SECRET_' },
    ]);
  });
});

describe("Buildbot's step kinds of issue 31 §2", () => {
  it("take Buildbot's defaults: compile halts, test warns on failure, each with its words", () => {
    const cfg = parseMasterConfig(
      withSteps(`
      - { type: compile }
      - { type: test, command: "make check" }
      - { type: warning_counting_shell, command: make, maxWarnCount: 3, suppressionList: [[null, "unused", null, null]] }
      - { type: remove_directory, dir: build }
      - { type: copy_directory, src: a, dest: b }
      - { type: set_property_value, property: p, value: [1, 2] }`),
    );
    const [compile, test, wcs, rm, cp, set] = cfg.builders[0]!.steps;
    expect(compile).toMatchObject({
      command: ['make', 'all'],
      haltOnFailure: true,
      description: 'compiling',
      descriptionDone: 'compile',
      warningPattern: '(?i).*warning[: ].*',
    });
    expect(test).toMatchObject({ command: 'make check', warnOnFailure: true, descriptionDone: 'test' });
    expect(wcs).toMatchObject({
      maxWarnCount: 3,
      haltOnFailure: false,
      suppressionList: [[null, 'unused', null, null]],
    });
    expect(rm).toMatchObject({ haltOnFailure: true, descriptionDone: 'Deleted' });
    expect(cp).toMatchObject({ timeout: 120, description: 'Copying' });
    expect(set).toMatchObject({ value: [1, 2], descriptionDone: 'Set' });
  });

  it('refuses a pattern with no JavaScript form and a command-less warning_counting_shell', () => {
    expect(problems(withSteps('[{ type: compile, warningPattern: "(?x)a b" }]'))).toEqual([
      'builders[0].steps[0].warningPattern: expected a regular expression: flag (?x) has no JavaScript form',
    ]);
    expect(problems(withSteps('[{ type: warning_counting_shell }]'))).toEqual([
      'builders[0].steps[0].command: expected a shell string or a list of arguments',
    ]);
  });

  it('refuses a property, a source stamp or worker info in a shell string run on the master', () => {
    expect(
      problems(withSteps('[{ type: master_shell, command: "deploy %(prop:branch)s %(src::branch)s" }]')),
    ).toEqual([
      'builders[0].steps[0].command: a shell string run on the master may not take %(prop:...)s, %(src:...)s: give the command as a list, each value one argument',
    ]);
    expect(
      problems(
        withSteps(
          '[{ type: master_shell, command: { interpolate: "x %(kw:a:-%(worker:os)s)s", kw: { a: 1 } } }]',
        ),
      ),
    ).toEqual([
      'builders[0].steps[0].command: a shell string run on the master may not take %(worker:...)s: give the command as a list, each value one argument',
    ]);
    const ok = parseMasterConfig(
      withSteps(
        '[{ type: master_shell, command: [deploy, "%(prop:branch)s"] }, { type: master_shell, command: "deploy %(secret:k)s" }]',
      ),
    );
    expect(ok.builders[0]!.steps.map((s) => [s.type, s.haltOnFailure, s.descriptionDone])).toEqual([
      ['master_shell', true, 'Ran'],
      ['master_shell', true, 'Ran'],
    ]);
  });
});

describe("Buildbot's builder and global settings", () => {
  it('take env, defaultProperties, workerbuilddir and global properties, and refuse a directory outside the base', () => {
    const cfg = parseMasterConfig(`
properties: { site: x }
workers: [{ name: w1, password: p }]
builders:
  - { name: b1, workers: [w1], env: { A: "%(prop:site)s" }, defaultProperties: { j: 2 }, workerbuilddir: dirs/b1 }`);
    expect(cfg.properties).toEqual({ site: 'x' });
    expect(cfg.builders[0]).toMatchObject({
      env: { A: '%(prop:site)s' },
      defaultProperties: { j: 2 },
      workerbuilddir: 'dirs/b1',
    });
    for (const dir of ['/srv/b1', '../b1', 'a/../../b1'])
      expect(
        problems(`
workers: [{ name: w1, password: p }]
builders: [{ name: b1, workers: [w1], workerbuilddir: ${JSON.stringify(dir)} }]`),
      ).toEqual(["builders[0].workerbuilddir: expected a relative path without '..'"]);
  });
});
