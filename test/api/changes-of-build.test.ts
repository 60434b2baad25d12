// A build's changes (/builds/{id}/changes): back to the change of the builder's previous
// successful build with the same repository, branch and codebase set, that build being the
// newest by completion (Buildbot's getPrevSuccessfulBuild), and found through migration
// 0028's index instead of comparing every successful build's stamps (the build page's 4-6 s
// on the 1M-row set, load/results/web-pages.md).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { compiled } from './lib/compiled.js';
import { ApiUnderTest, collection } from './lib/harness.js';

// One builder, one change per build, each change the parent of the next; every fourth build
// succeeds. Build 584 completed last of them all (a retried upload, say), build 592 succeeded on
// another branch, and the ten newest failed: the build before 600 to stop at is 584.
const N = 2000;
let api: ApiUnderTest;

beforeAll(async () => {
  api = await ApiUnderTest.start('migrated');
  const q = (s: ReturnType<typeof sql>) => api.db.pool.query(s);
  await q(
    sql`INSERT INTO masters (id, name, name_hash, active, last_active) VALUES (1, 'm', md5('m'), 1, 0)`,
  );
  await q(sql`INSERT INTO builders (id, name, name_hash) VALUES (1, 'b', md5('b'))`);
  await q(sql`
    INSERT INTO sourcestamps (id, ss_hash, branch, revision, repository, codebase, project, created_at)
    SELECT i, md5(i::text), CASE WHEN i = 592 THEN 'other' ELSE 'main' END, 'r' || i, 'repo', '', 'p', i
    FROM generate_series(1, ${N}) i`);
  await q(sql`
    INSERT INTO changes (changeid, author, comments, branch, revision, when_timestamp, repository, codebase,
                         project, sourcestampid, parent_changeids)
    SELECT i, 'a', 'c' || i, CASE WHEN i = 592 THEN 'other' ELSE 'main' END, 'r' || i, i, 'repo', '', 'p', i,
           nullif(i - 1, 0)
    FROM generate_series(1, ${N}) i`);
  await q(
    sql`INSERT INTO buildsets (id, submitted_at, complete) SELECT i, i, 1 FROM generate_series(1, ${N}) i`,
  );
  await q(sql`
    INSERT INTO buildset_sourcestamps (id, buildsetid, sourcestampid) SELECT i, i, i FROM generate_series(1, ${N}) i`);
  await q(sql`
    INSERT INTO buildrequests (id, buildsetid, builderid, submitted_at, complete) SELECT i, i, 1, i, 1
    FROM generate_series(1, ${N}) i`);
  await q(sql`
    INSERT INTO builds (id, number, builderid, buildrequestid, masterid, started_at, complete_at, state_string, results)
    SELECT i, i, 1, i, 1, i, CASE WHEN i = 584 THEN 10 * ${N} ELSE i END, 'done',
           CASE WHEN i % 4 = 0 AND (i <= 590 OR i = 592) THEN 0 ELSE 2 END
    FROM generate_series(1, ${N}) i`);
  await q(sql`ANALYZE`);
});
afterAll(async () => {
  await api?.close();
});

it("answers the changes since the builder's previous successful build of the same stamps", async () => {
  const { rows } = collection<{ changeid: number }>(await api.get('/builds/600/changes'), 'changes');
  expect(rows.map((r) => r.changeid)).toEqual(Array.from({ length: 16 }, (_, k) => 600 - k));
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows': number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

it('finds that build by reading the index of successful builds newest first, up to the first that matches', async () => {
  const { query } = compiled('/builds/600/changes');
  const [row] = await api.db.pool.query(sql`EXPLAIN (ANALYZE, FORMAT JSON) ${query}`);
  const plan = (row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
  const scans = nodes(plan).filter((n) => n['Index Name'] === 'flotilla_builds_builder_success_cover');
  // One ordered scan that stops at build 584, its first row; comparing every successful
  // build's stamps (before 0028) read 148 rows here, 64,000 per builder on the 1M-row set.
  // (The page and its total each look it up.)
  expect(scans.length).toBeGreaterThan(0);
  // Index-only once VACUUM has marked the pages (0033 carries what the scan reads).
  for (const n of scans) {
    expect(['Index Scan', 'Index Only Scan']).toContain(n['Node Type']);
    expect(n['Actual Rows']).toBe(1);
  }
});
