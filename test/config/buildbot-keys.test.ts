// What a master.cfg moved over carries (issue 31 §2): step names as Buildbot allows them
// (a string of 1 to 50 characters, spaces allowed), and Buildbot keys that mean nothing here,
// accepted and named with why they are ignored, not refused.
import { describe, expect, it } from 'vitest';
import { ignoredKeys, parseMasterConfig } from '../../services/core/config/master-config.js';
import { problems } from './problems.js';

const withStep = (name: string) => `
workers: [{ name: w1, password: p }]
builders:
  - name: b1
    workers: [w1]
    steps: [{ type: shell, name: ${JSON.stringify(name)}, command: "echo" }]`;

describe('step names', () => {
  it('take any string of at most 50 characters, as Buildbot does', () => {
    for (const name of [
      'unit tests',
      'set stage',
      'trigger packaging',
      'compile (warnings)',
      'é ü ß',
      'x'.repeat(50),
    ])
      expect(parseMasterConfig(withStep(name)).builders[0]!.steps[0]!.name).toBe(name);
  });

  it('refuses an empty name and one over 50 characters, with the key path', () => {
    expect(problems(withStep(''))).toEqual([
      'builders[0].steps[0].name: expected a step name (1 to 50 characters)',
    ]);
    expect(problems(withStep('x'.repeat(51)))).toEqual([
      'builders[0].steps[0].name: expected at most 50 characters',
    ]);
    // Code points, as Python's len() and the steps table count: 50 non-BMP characters fit.
    expect(parseMasterConfig(withStep('😀'.repeat(50))).builders[0]!.steps[0]!.name).toBe('😀'.repeat(50));
  });

  it('leave builder names URL identifiers', () => {
    expect(problems('builders: [{ name: "unit tests", workers: [w] }]').join()).toMatch(
      /builders\[0\]\.name: expected an identifier/,
    );
  });
});

describe('Buildbot keys Flotilla ignores', () => {
  it('are accepted and named with why', () => {
    const cfg = parseMasterConfig(`
buildbotNetUsageData: null
titleURL: https://buildbot.net/
www: { port: "tcp:8010:interface=127.0.0.1", plugins: { waterfall_view: {} } }
`);
    expect(ignoredKeys(cfg).map((k) => k.key)).toEqual([
      'buildbotNetUsageData',
      'titleURL',
      'www.port',
      'www.plugins',
    ]);
    for (const { reason } of ignoredKeys(cfg)) expect(reason).toMatch(/\w{4}/);
  });

  it('are not named when absent, and other unknown keys are still refused', () => {
    expect(ignoredKeys(parseMasterConfig(''))).toEqual([]);
    // A key present with Buildbot's "off" value (None) is still named: it was written, and is ignored.
    expect(ignoredKeys(parseMasterConfig('buildbotNetUsageData: basic')).map((k) => k.key)).toEqual([
      'buildbotNetUsageData',
    ]);
    expect(problems('www: { port: 8010, portt: 1 }')).toEqual(['www: unknown key "portt"']);
    expect(problems('changeHorizon: 200')).toEqual(['(top level): unknown key "changeHorizon"']);
  });
});
