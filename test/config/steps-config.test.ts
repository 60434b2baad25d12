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
