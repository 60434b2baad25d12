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

/** Builds 1..count of a builder on repo2's buildsets 3001..., with ids from base + 1, all of one result. */
async function buildsOfRepo2(builderid: number, base: number, count: number, results: number) {
  await api.db.pool.query(sql`
    INSERT INTO buildrequests (id, buildsetid, builderid, submitted_at, complete)
    SELECT ${base} + k, 3000 + k, ${builderid}, k, 1 FROM generate_series(1, ${count}) k`);
  await api.db.pool.query(sql`
    INSERT INTO builds (id, number, builderid, buildrequestid, masterid, started_at, complete_at, state_string, results)
    SELECT ${base} + k, k, ${builderid}, ${base} + k, 1, k, k, 'done', ${results} FROM generate_series(1, ${count}) k`);
}

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
  // Builder 2 builds two branches of repo2: its build 300 is on main, whose last success
  // (build 50) is 250 successes of the other branch back, more than changes.ts compares.
  await q(sql`INSERT INTO builders (id, name, name_hash) VALUES (2, 'b2', md5('b2'))`);
  await q(sql`
    INSERT INTO sourcestamps (id, ss_hash, branch, revision, repository, codebase, project, created_at)
    SELECT 3000 + k, md5('b2' || k), CASE WHEN k <= 50 OR k = 300 THEN 'main' ELSE 'feature' END, 'r' || k,
           'repo2', '', 'p', k
    FROM generate_series(1, 300) k`);
  await q(sql`
    INSERT INTO changes (changeid, author, comments, branch, revision, when_timestamp, repository, codebase,
                         project, sourcestampid, parent_changeids)
    SELECT 3000 + k, 'a', 'c' || k, CASE WHEN k <= 50 OR k = 300 THEN 'main' ELSE 'feature' END, 'r' || k, k,
           'repo2', '', 'p', 3000 + k, CASE WHEN k > 1 THEN 2999 + k END
    FROM generate_series(1, 300) k`);
  await q(
    sql`INSERT INTO buildsets (id, submitted_at, complete) SELECT 3000 + k, k, 1 FROM generate_series(1, 300) k`,
  );
  await q(sql`
    INSERT INTO buildset_sourcestamps (id, buildsetid, sourcestampid)
    SELECT 3000 + k, 3000 + k, 3000 + k FROM generate_series(1, 300) k`);
  await buildsOfRepo2(2, 3000, 300, 0);
  // Builder 3 built main's first 50 stamps of repo2 too, and never succeeded.
  await q(sql`INSERT INTO builders (id, name, name_hash) VALUES (3, 'b3', md5('b3'))`);
  await buildsOfRepo2(3, 4000, 50, 2);
  await q(sql`ANALYZE`);
});
afterAll(async () => {
  await api?.close();
});

it("answers the changes since the builder's previous successful build of the same stamps", async () => {
  const { rows, total } = collection<{ changeid: number }>(await api.get('/builds/600/changes'), 'changes');
  expect(rows.map((r) => r.changeid)).toEqual(Array.from({ length: 16 }, (_, k) => 600 - k));
  expect(total).toBe(16);
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Alias?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

const planOf = async (url: string): Promise<PlanNode[]> => {
  const { query } = compiled(url);
  const [row] = await api.db.pool.query(sql`EXPLAIN (ANALYZE, FORMAT JSON) ${query}`);
  return nodes((row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
};
/** How many builds' stamp sets were read (changes.ts's stampKeyOf, br2), the build's own included. */
const stampSetsRead = (plan: PlanNode[]) =>
  plan.filter((n) => n.Alias?.startsWith('br2')).reduce((sum, n) => sum + n['Actual Loops'], 0);
const rowsFrom = (plan: PlanNode[], index: string) =>
  plan.filter((n) => n['Index Name'] === index).reduce((sum, n) => sum + n['Actual Rows'], 0);

it('finds that build by reading the successful builds newest by completion first, up to the first that matches', async () => {
  const plan = await planOf('/builds/600/changes');
  // The build's own stamps, then build 584's, the first, which match: one comparison;
  // comparing every successful build's stamps (before 0028) made 148 here, 64,000 per builder
  // on the 1M-row set. Once: the total is the unpaged page's size, not the walk evaluated
  // again (which made it 4).
  expect(stampSetsRead(plan)).toBe(2);
});

it("finds a branch's last success past the builder's recent successes of other branches from the stamps", async () => {
  const { rows, total } = collection<{ changeid: number }>(await api.get('/builds/3300/changes'), 'changes');
  // back to build 50's change, the last success on main: 3300 ... 3051
  expect(rows.map((r) => r.changeid)).toEqual(Array.from({ length: 250 }, (_, k) => 3300 - k));
  expect(total).toBe(250);
  const plan = await planOf('/builds/3300/changes');
  // The builder's newest 100 successes compared (changes.ts's NEAR), then the builds of
  // main's 51 stamps; before, the stamps of all 250 successes newer than build 50 were compared
  // (501 comparisons: the page and its total each), as many as the builder has successes
  // when none of them built that branch (8,000 on a broken builder at 10M builds).
  expect(stampSetsRead(plan)).toBeLessThanOrEqual(1 + 100 + 51);
  expect(stampSetsRead(plan)).toBeGreaterThan(100);
});

it('answers the REST form of the previous successful build from the index of successes by number', async () => {
  const url = '/builders/1/builds?results=0&complete=true&number__lt=2000&order=-number&limit=1';
  const { rows, total } = collection<{ number: number }>(await api.get(url), 'builds');
  expect(rows.map((r) => r.number)).toEqual([592]);
  expect(total).toBe(148);
  // Builds 593-1999 failed: builds_number passed each of them, a heap visit each (1,837 on
  // a broken builder of the fleet set); 0041's index holds only the successes.
  const plan = await planOf(url);
  expect(rowsFrom(plan, 'builds_number')).toBe(0);
  expect(plan.some((n) => n['Node Type'] === 'Seq Scan' && n.Alias === 'a')).toBe(false);
});

it('looks up no stamps for a builder that never succeeded', async () => {
  const { rows } = collection<{ changeid: number }>(await api.get('/builds/4050/changes'), 'changes');
  // no previous success: the walk goes back through every ancestor (3050 ... 3001)
  expect(rows.map((r) => r.changeid)).toEqual(Array.from({ length: 50 }, (_, k) => 3050 - k));
  const plan = await planOf('/builds/4050/changes');
  // Nothing to compare, and the branch's stamps are not looked up either: 8e8a581 did, every
  // stamp of the branch (2,250 a read for the fleet set's 140 builders without a success).
  expect(stampSetsRead(plan)).toBeLessThanOrEqual(1);
  expect(plan.filter((n) => n.Alias === 's' && n['Actual Loops'] > 0 && n['Actual Rows'] > 0)).toEqual([]);
});
