// Buildbot 4.3's golden cases (test/fixtures/buildbot-4.3/cases.json): written from Buildbot
// 4.3's source, not recorded, each naming the rule it follows. The API runs on a fresh copy
// of the 3.7 fixture with the rows only 4.3 writes (two projects, two builders in one).
import { expect, it } from 'vitest';
import { FIXTURE_43_SQL, goldenCases43 } from '../helpers/buildbot-recorded.js';
import { fixtureApi } from './fixture-api.js';
import { replayCases } from './golden/replay.js';

const base = fixtureApi(FIXTURE_43_SQL);

it("every golden case of Buildbot 4.3's source passes", async () => {
  const cases = goldenCases43();
  expect(cases.length).toBeGreaterThan(20);
  for (const c of cases) expect(c.note, `${c.id} names its rule`).toMatch(/\S/);
  const { ran, failures } = await replayCases(base(), cases);
  expect(failures, 'failing cases').toEqual([]);
  expect(ran).toBe(cases.length);
}, 120_000);
