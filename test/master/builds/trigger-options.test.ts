// The trigger step's source stamp and property options (issue 31 §2), in Buildbot 3.7's
// meaning (buildbot/steps/trigger.py prepareSourcestampListForTrigger, Triggerable's
// addBuildsetForSourceStampsWithDefaults): the build sets a real build's trigger steps add,
// read back from the database. The parent's got_revision is set as a source step would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildsetSourceStamps,
  getBuildsetProperties,
  type SourceStampFacts,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { problems } from '../../config/problems.js';
import { ScriptedWorker, Stage } from '../in-process.js';
import { ranBuild } from './lib.js';

const CONFIG = `
log_compression: none
workers: [{ name: w1, password: x }]
builders:
  - name: parent
    workers: [w1]
    steps:
      - { type: set_property_value, name: checkout, property: got_revision, value: def456 }
      - { type: set_property_value, name: color, property: color, value: blue }
      - { type: trigger, name: updated, schedulers: [kids], copy_properties: [color, missing], set_properties: { x: 1 } }
      - { type: trigger, name: latest, schedulers: [pinned], alwaysUseLatest: true }
      - type: trigger
        name: given
        schedulers: [kids]
        sourceStamps: [{ branch: "rel-%(prop:color)s", revision: fff }, { codebase: lib, repository: https://lib }]
      - { type: trigger, name: same, schedulers: [kids], updateSourceStamp: false }
  - { name: child, workers: [w1], steps: [] }
schedulers:
  - { type: triggerable, name: kids, builders: [child] }
  - { type: triggerable, name: pinned, builders: [child], codebases: { "": { repository: https://r, branch: stable } } }
`;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
  const m = await stage.master('trigger-options', CONFIG);
  m.workers.connect(new ScriptedWorker('w1'));
}, 120_000);
afterAll(() => stage?.close());

const stamp = (s: SourceStampFacts) => [s.codebase, s.repository, s.branch, s.revision];

describe("a trigger step's source stamps and properties", () => {
  it("are Buildbot's: got_revision by default, none with alwaysUseLatest, the given ones, or the build's own", async () => {
    const { build, ran } = await ranBuild(stage, 'parent');
    expect(ran.map((s) => s.name).join(' ')).toBe('checkout color updated latest given same');
    expect(new Set(ran.map((s) => s.results))).toEqual(new Set([Results.SUCCESS]));
    expect(build.results).toBe(Results.SUCCESS);
    const q = stage.db.pool;
    const [parentSet] = await q.query(sql`SELECT buildsetid FROM buildrequests br JOIN builds b
      ON b.buildrequestid = br.id WHERE b.id = ${build.id}`);
    const [own] = await buildsetSourceStamps(q, parentSet.buildsetid);
    const sets = (
      await q.query(sql`SELECT id FROM buildsets WHERE parent_buildid = ${build.id} ORDER BY id`)
    ).map((r) => r.id as number);
    expect(sets).toHaveLength(4);
    const stamps = await Promise.all(sets.map((id) => buildsetSourceStamps(q, id)));
    expect(stamps.map((ss) => ss.map(stamp))).toEqual([
      [['', 'r', 'main', 'def456']],
      [['', 'https://r', 'stable', null]],
      [
        ['', '', 'rel-blue', 'fff'],
        ['lib', 'https://lib', null, null],
      ],
      [['', 'r', 'main', 'abc']],
    ]);
    // updateSourceStamp: false keeps the very stamp (and its changes).
    expect(stamps[3]![0]!.ssid).toBe(own!.ssid);
    expect(await getBuildsetProperties(q, sets[0]!)).toMatchObject({
      x: [1, 'Trigger'],
      color: ['blue', 'Trigger'],
      missing: [null, 'Trigger'],
      scheduler: ['kids', 'Scheduler'],
    });
  });

  it('refuses what Buildbot refuses together', () => {
    const cfg = (step: string) => `
workers: [{ name: w1, password: x }]
builders: [{ name: b, workers: [w1], steps: [${step}] }]
schedulers: [{ type: triggerable, name: k, builders: [b] }]`;
    expect(
      problems(cfg('{ type: trigger, schedulers: [k], alwaysUseLatest: true, updateSourceStamp: true }')),
    ).toEqual(['builders[0].steps[0].updateSourceStamp: not with alwaysUseLatest (Buildbot refuses both)']);
    expect(
      problems(
        cfg(
          '{ type: trigger, schedulers: [k], sourceStamps: [{ revision: a }, { revision: b }], alwaysUseLatest: true }',
        ),
      ),
    ).toEqual([
      'builders[0].steps[0].alwaysUseLatest: not with sourceStamps (Buildbot refuses both)',
      'builders[0].steps[0].sourceStamps[1].codebase: codebase "" given twice',
    ]);
  });
});
