// Buildbot 4.3's commits_common_parent where the golden cases (small histories) cannot reach:
// the walk stops 100 parents from each commit, as Buildbot's depth, and a parent cycle in a
// damaged table ends it too, with an answer, not a hang.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMIT_RANGE_DEPTH, commitRangeJson } from '../../../services/core/data/commit-range.js';
import { nameHash } from '../../../services/core/data/names.js';
import { sql } from '../../../services/core/db/pool.js';
import { type Harness, openHarness, uniq } from './harness.js';

let h: Harness;
let codebaseid: number;
/** Ids of a line of commits, each the previous one's child: line[0] is the root. */
let line: number[];

async function range(a: number, b: number): Promise<unknown> {
  const [r] = await h.db.pool.query(sql`SELECT ${commitRangeJson(codebaseid, a, b)} AS r`);
  return r.r;
}

beforeAll(async () => {
  h = await openHarness('migrated');
  const name = uniq('p');
  const [p] = await h.db.pool.query(
    sql`INSERT INTO projects (name, name_hash, slug) VALUES (${name}, ${nameHash(name)}, ${name}) RETURNING id`,
  );
  const [cb] = await h.db.pool.query(sql`INSERT INTO codebases (projectid, name, slug, name_hash)
    VALUES (${p.id}, 'main', 'main', ${nameHash('main')}) RETURNING id`);
  codebaseid = cb.id;
  line = [];
  for (let i = 0; i < COMMIT_RANGE_DEPTH + 3; i++) {
    const [c] = await h.db.pool.query(sql`INSERT INTO codebase_commits
      (codebaseid, author, comments, when_timestamp, revision, parent_commitid)
      VALUES (${codebaseid}, 'a', ${`c${i}`}, ${i}, ${`r${i}`}, ${line.at(-1) ?? null}) RETURNING id`);
    line.push(c.id);
  }
});
afterAll(async () => {
  await h?.close();
});

describe('commit ranges (Buildbot 4.3 commits_common_parent)', () => {
  it('reach an ancestor exactly the depth away, and no further', async () => {
    const tip = line.length - 1;
    const atDepth = line[tip - COMMIT_RANGE_DEPTH]!;
    expect(await range(line[tip]!, atDepth)).toEqual({
      common: atDepth,
      to1: line.slice(tip - COMMIT_RANGE_DEPTH),
      to2: [atDepth],
    });
    expect(await range(line[tip]!, line[tip - COMMIT_RANGE_DEPTH - 1]!)).toBeNull();
  });

  it('end on a parent cycle', async () => {
    // Commit 1's parent made commit 2: 1 -> 2 -> 1 -> ... (a root's child and the root).
    const [a, b] = [line[0]!, line[1]!];
    await h.db.pool.query(sql`UPDATE codebase_commits SET parent_commitid = ${b} WHERE id = ${a}`);
    try {
      const far = line[5]!;
      // From line[5] down, line[1] is the first the cycle's chain holds (at 1: a, then b).
      expect(await range(a, far)).toEqual({
        common: b,
        to1: [b, a],
        to2: [b, line[2], line[3], line[4], far],
      });
    } finally {
      await h.db.pool.query(sql`UPDATE codebase_commits SET parent_commitid = NULL WHERE id = ${a}`);
    }
  });
});
