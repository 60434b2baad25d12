// The golden cases (test/fixtures/buildbot-3.7/cases.json), as part of npm test: the API runs
// as a real process on a fresh copy of the fixture (with the oracle's configuration, so
// /forceschedulers matches), and golden/replay.ts asks it every case and compares each answer
// by the cases' rules (golden/compare.ts), mutating ones included (they run last, and this
// copy is thrown away afterwards).
//
// A few cases record an answer that a later decision changed on purpose; they are left out
// of the replay, each with its reason (docs/compatibility.md), and the new answer is checked
// where the decision was made.
import { expect, it } from 'vitest';
import { goldenCases } from '../helpers/buildbot-recorded.js';
import { fixtureApi } from './fixture-api.js';
import { replayCases } from './golden/replay.js';

const base = fixtureApi();

const OVERRULED: Record<string, string> = {
  'jsonrpc/unknown-method-forcescheduler':
    'Buildbot answers 200 `result: null`; Flotilla -32601 like every other path (test/api/auth/force.test.ts)',
  'jsonrpc/force-builder-not-handled':
    'a builder that is not the scheduler\'s: 400 in Buildbot\'s -32602 shape, not {"error"} (test/api/auth/force.test.ts)',
};

// Answered as Buildbot 4.3 answers them (docs/compatibility.md), checked by the 4.3 cases
// (compare-4.3.test.ts): the root lists `projects` too, and the spec its paths and fields.
const ROOT_43 = 'the root links include `projects` (Buildbot 4.3): root/get-root-4.3';
const SPEC_43 = "Buildbot 4.3's paths and fields: spec/get-application.spec_path=projects-4.3";
const BUILDBOT_4_3: Record<string, string> = {
  'root/get-root': ROOT_43,
  'root/get-order=name': ROOT_43,
  'root/get-field=name_order=-name': ROOT_43,
  'root/no-accept': ROOT_43,
  'spec/get-application.spec': SPEC_43,
  'spec/get-application.spec_limit=2_order=path': SPEC_43,
  'spec/get-application.spec_path=builders': SPEC_43,
  'spec/get-application.spec_field=path_field=type_order=-path_limit=5_offset=3': SPEC_43,
};

it('every golden case of the oracle passes', async () => {
  const cases = goldenCases();
  expect(cases).toHaveLength(268);
  const ids = cases.map((c) => c.id);
  for (const id of Object.keys(OVERRULED))
    expect(ids, 'an overruled case that no longer exists').toContain(id);
  for (const id of Object.keys(BUILDBOT_4_3))
    expect(ids, 'a case Buildbot 4.3 changed that no longer exists').toContain(id);
  const asked = cases.filter((c) => !(c.id in OVERRULED) && !(c.id in BUILDBOT_4_3));
  const { ran, failures } = await replayCases(base(), asked);
  expect(failures, 'failing cases').toEqual([]);
  // Every case but the overruled ones ran.
  expect(ran).toBe(asked.length);
}, 180_000);
