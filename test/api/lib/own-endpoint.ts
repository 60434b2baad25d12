// What the tests of Flotilla's own read endpoints (those Buildbot 3.7 has not:
// `/builds/{buildid}/logs`, `/change_builds`) share: an API on a migrated database holding
// only the rows the test inserts, bad query input refused with 400 in the contract's shape,
// and the endpoint kept out of /application.spec, which lists Buildbot 3.7's endpoints only.
import { afterAll, beforeAll, expect } from 'vitest';
import type { SQLQuery } from '../../../services/core/db/pool.js';
import { ApiUnderTest, collection } from './harness.js';

/** An API on a fresh migrated database with `rows` inserted, opened before the suite's tests and closed after. */
export function apiOnRows(rows: readonly SQLQuery[]): { readonly api: ApiUnderTest } {
  let api: ApiUnderTest | undefined;
  beforeAll(async () => {
    api = await ApiUnderTest.start('migrated');
    for (const q of rows) await api.db.pool.query(q);
  });
  afterAll(async () => {
    await api?.close();
  });
  return {
    get api() {
      return api!;
    },
  };
}

/** Each query string on `path` answers 400 with an error message, as the contract says. */
export async function expectBadQueriesRefused(
  api: ApiUnderTest,
  path: string,
  queries: string[],
): Promise<void> {
  for (const q of queries) {
    const a = await api.get(`${path}?${q}`);
    expect([q, a.status]).toEqual([q, 400]);
    expect(typeof a.json().error).toBe('string');
  }
}

/** /application.spec lists Buildbot's `buildbots` path and not our `ours`. */
export async function expectOutsideSpec(api: ApiUnderTest, ours: string, buildbots: string): Promise<void> {
  const spec = collection<{ path: string }>(await api.get('/application.spec'), 'specs').rows;
  expect(spec.some((s) => s.path === ours)).toBe(false);
  expect(spec.some((s) => s.path === buildbots)).toBe(true);
}
