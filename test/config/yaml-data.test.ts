// The configuration's YAML read by js-yaml where it is faster (core/config/yaml-data.ts) must
// be exactly what the `yaml` package reads: the same data, or an error with yaml's messages.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fleetYaml } from '../../load/fleet/config.js';
import { jsYamlFirst, slowly, yamlData } from '../../services/core/config/yaml-data.js';

const EDGES = [
  // The scalars of yaml's core schema, and js-yaml's that it lacks (binary, underscores, signed floats).
  ...[
    '0b101',
    '1_000',
    '0o17',
    '017',
    '0x1F',
    '0X1F',
    '+12',
    '-0',
    '1e3',
    '-1.5e-3',
    '.5',
    '-.5',
    '+.5',
    '5.',
    '1.',
  ],
  ...[
    '.inf',
    '-.Inf',
    '+.INF',
    '.NaN',
    '.nan',
    'yes',
    'on',
    'True',
    'fAlse',
    '~',
    'Null',
    '',
    '2026-01-01',
    '1:20',
  ],
  ...[
    '9007199254740993',
    '0.1e+1',
    '"1"',
    "'x'",
    '"\\u00e9\\x41"',
    '[1, 2,]',
    '{b: 1, }',
    '@x',
    '`x',
    '"x"y',
  ],
].map((v) => `a: ${v}`);
const DOCUMENTS = [
  ...EDGES,
  'a: |\n  x\n  y\n',
  'a: >-\n  x\n  y\n',
  '? [a, b]\n: 1',
  '? a\n: b',
  '1: a\n2.5: b\ntrue: c\nnull: d',
  '~: x',
  'a: 1\na: 2',
  'a:\n\t- b',
  'a: b #c\nd: e#f',
  '- a\n- b',
  '',
  '# only',
  '---\na: 1\n---\nb: 2',
  '---\na: 1\n...\n',
  'a: b: c',
  'a: - b',
  'a: b\n  c: d',
  '<<: {a: 1}\nb: 2',
  'a: &x 1\nb: *x',
  'a: !!str 1',
  '%YAML 1.2\n---\na: 1',
  'a: "*"\nb: "ls *.c"',
  '__proto__: {x: 1}',
  'a: plain\n  continued',
  'a:\n  - {b: 1}\n  - [c]',
  'a: "multi\n  line"',
];

describe('a configuration read by js-yaml first', () => {
  it.each(DOCUMENTS.map((d) => [JSON.stringify(d), d]))('reads %s as yaml does', (_, text) => {
    expect(yamlData(text)).toEqual(slowly(text));
  });

  it('reads every YAML file of the repository as yaml does', () => {
    const files = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect({ f, read: yamlData(text) }).toEqual({ f, read: slowly(text) });
    }
  });

  it('asks js-yaml for a fleet of a thousand builders and for the example, and yaml where it must', () => {
    const fleet = fleetYaml({ builders: 1000, workers: 1000, masters: 3 });
    expect(jsYamlFirst(fleet)).toBe(true);
    expect(yamlData(fleet)).toEqual(slowly(fleet));
    expect(jsYamlFirst(readFileSync('deploy/example/master.yaml', 'utf8'))).toBe(true);
    for (const text of ['a: &x 1\nb: *x', 'a: !!str 1', '? a\n: b', 'null: 1', '%YAML 1.2\n---\na: 1'])
      expect(jsYamlFirst(text)).toBe(false);
  });
});
