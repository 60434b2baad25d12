// Step names as Buildbot allows them (issue 31 §2): any string of at most 50 characters, so
// `unit tests` and `set stage` (the oracle's own step names) load, build and are stored as
// named. Buildbot's REST paths by step name match identifiers only (`steps/i:step_name`): the
// oracle answers 404 for /builds/2/steps/unit%20tests and its steps are read by number
// (checked against the fixture master, 2026-11-28); Flotilla answers the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Results } from '../../../services/core/results.js';
import { ScriptedWorker, Stage } from '../in-process.js';
import { apiOn, ranBuild } from './lib.js';

const CONFIG = `
log_compression: none
workers: [{ name: w1, password: x }]
builders:
  - name: spaced
    workers: [w1]
    steps:
      - { type: set_property, name: set stage, command: "echo testing", property: stage }
      - { type: shell, name: unit tests, command: "echo test_1 ok" }
      - { type: shell, name: "fifty characters exactly, spaces and all: 01234567", command: "echo ok" }
`;

let stage: Stage;
let api: Awaited<ReturnType<typeof apiOn>>;

beforeAll(async () => {
  stage = await Stage.open();
  const m = await stage.master('step-names', CONFIG);
  m.workers.connect(new ScriptedWorker('w1'));
  api = await apiOn(stage);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await stage?.close();
});

const get = (path: string) => api.get(path);

describe('step names with spaces', () => {
  it('build under their names, are listed by the REST API, and are read by number as in Buildbot', async () => {
    const { build, ran } = await ranBuild(stage, 'spaced');
    expect(build.results).toBe(Results.SUCCESS);
    expect(ran.map((s) => [s.name, s.results])).toEqual([
      ['set stage', Results.SUCCESS],
      ['unit tests', Results.SUCCESS],
      ['fifty characters exactly, spaces and all: 01234567', Results.SUCCESS],
    ]);

    const listed = (await get(`/builds/${build.id}/steps`)).json() as {
      steps: { name: string; number: number }[];
    };
    expect(listed.steps.map((s) => [s.number, s.name])).toEqual([
      [0, 'worker_preparation'],
      [1, 'set stage'],
      [2, 'unit tests'],
      [3, 'fifty characters exactly, spaces and all: 01234567'],
    ]);
    const byNumber = await get(`/builds/${build.id}/steps/2`);
    expect(byNumber.statusCode).toBe(200);
    expect((byNumber.json() as { steps: { name: string }[] }).steps[0]!.name).toBe('unit tests');
    // Buildbot's path by name takes an identifier: a name with a space is not one (404 there too).
    expect((await get(`/builds/${build.id}/steps/unit%20tests`)).statusCode).toBe(404);
    expect((await get(`/builders/spaced/builds/1/steps/set%20stage`)).statusCode).toBe(404);
    // An identifier name still answers by name.
    const prep = await get(`/builders/spaced/builds/1/steps/worker_preparation`);
    expect(prep.statusCode).toBe(200);
  });
});
