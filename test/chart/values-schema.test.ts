// values.schema.json covers every value: each key of values.yaml and of the ci/ value sets
// is described, every object in the schema is closed (or a declared map), and helm itself
// refuses what the schema does not describe.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, template } from './lib/helm.js';
import { chartSchema, chartValues, openObjects, undescribedKeys } from './lib/schema.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const schema = chartSchema();

describe('values.schema.json', () => {
  it('describes every key in values.yaml', () => {
    expect(undescribedKeys(schema, schema, chartValues())).toEqual([]);
  });

  it.each(CI_VALUES.map((f) => [basename(f), f]))('describes every key in %s', (_name, file) => {
    expect(undescribedKeys(schema, schema, parse(readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('would notice a key it does not describe', () => {
    const values = { ...chartValues(), api: { replicas: 2, replica: 3 }, newThing: {} };
    expect(undescribedKeys(schema, schema, values).sort()).toEqual(['api.replica', 'newThing']);
  });

  it('would notice an undescribed key inside a list item (a builder step)', () => {
    const values = {
      config: { builders: [{ name: 'b', steps: [{ type: 'shell', command: 'x', comand: 'y' }] }] },
    };
    expect(undescribedKeys(schema, schema, values)).toEqual(['config.builders[0].steps[0].comand']);
  });

  it('closes every object (additionalProperties false, or a declared map)', () => {
    expect(openObjects(schema)).toEqual([]);
  });

  it('would notice an open object', () => {
    const open = {
      type: 'object',
      properties: { a: { type: 'object', properties: {} } },
      additionalProperties: false,
    };
    expect(openObjects(open)).toEqual(['#/properties/a']);
  });
});

describe('helm enforces the schema', () => {
  const minimal = CI_VALUES[0]!;

  it.each([
    ['a misspelled top-level key', { logLevl: 'debug' }, 'logLevl'],
    ['a misspelled nested key', { api: { autoscaling: { enable: true } } }, 'enable'],
    [
      'a misspelled builder step key',
      { config: { builders: [{ name: 'b', steps: [{ type: 'shell', comand: 'x' }] }] } },
      'comand',
    ],
    ['a wrong type', { master: { replicas: 'three' } }, 'replicas'],
    [
      'a worker list of its own (the chart makes it)',
      { config: { workers: [{ name: 'w', password: 'p' }] } },
      'workers',
    ],
  ])('refuses %s', (_what, values, key) => {
    const r = template([minimal, values]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("values don't meet the specifications of the schema");
    expect(r.stderr).toContain(key);
  });
});
