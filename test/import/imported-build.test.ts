// An imported builder runs as Buildbot ran it (issue 31 §1): the oracle's master.cfg is imported
// (the real importer, Debian's buildbot), its `package` builder is bound to a real
// buildbot-worker 3.7 (the only change: which worker), and a build of it on a Flotilla master
// gives the step names, results and state strings that Buildbot 3.7 gave for the same builder
// (the oracle's fixture, build 21: test/fixtures/buildbot-3.7/fixture.sql).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { Results } from '../../services/core/results.js';
import { finishedBuild, request, steps } from '../master/builds/lib.js';
import { type RealWorkers, startRealWorkers } from '../master/builds/real-workers.js';
import { Stage } from '../master/in-process.js';

const root = mkdtempSync(join(tmpdir(), 'imported-build-'));
let stage: Stage;
let workers: RealWorkers;

// What Buildbot 3.7 stored for a successful `package` build (fixture.sql, steps of build 21),
// its worker's name aside.
const BUILDBOT = [
  ['worker_preparation', Results.SUCCESS, 'worker WORKER ready'],
  ['tar', Results.SUCCESS, "'for i ...'"],
  ['maybe fail', Results.SUCCESS, `'echo "fail=no"; ...'`],
  ['upload', Results.SUCCESS, "'echo uploaded'"],
  ['notify', Results.SUCCESS, "'echo notified'"],
];

beforeAll(async () => {
  const { stdout } = await promisify(execFile)('sh', [
    'deploy/import/import-buildbot-config.sh',
    'test/fixtures/buildbot-3.7/master.cfg',
  ]);
  const imported = parse(stdout) as { builders: { name: string; workers: string[] }[] };
  const pkg = imported.builders.find((b) => b.name === 'package')!;
  const yaml = stringify({
    log_compression: 'none',
    workers: [
      { name: 'agent', password: 'pw' },
      { name: 'bbw', password: 'pw' },
    ],
    builders: [{ ...pkg, workers: ['bbw'] }],
  });
  stage = await Stage.open();
  workers = await startRealWorkers(stage, yaml, root, ['package']);
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

it("an imported builder's build has Buildbot's step names, results and state strings", async () => {
  const { brid } = await request(stage, 'package');
  const build = await finishedBuild(stage, brid, 90_000);
  expect([build.results, build.state_string]).toEqual([Results.SUCCESS, 'build successful']);
  const ran = await steps(stage, build.id);
  expect(ran.map((s) => [s.name, s.results, s.state_string])).toEqual(
    BUILDBOT.map(([n, r, s]) => [n, r, (s as string).replace('WORKER', 'bbw')]),
  );
});
