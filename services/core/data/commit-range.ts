// The first common ancestor of two commits of a codebase, and the commits from it to each
// (Buildbot 4.3's `commits_common_parent`, db/codebase_commits.py
// get_first_common_commit_with_ranges). Buildbot walks parent_commitid one row at a time,
// at most 100 parents from each commit; here one statement walks both chains with the same
// bound (a recursive CTE that also ends on a parent cycle a damaged table could hold), and
// the meeting point is the commit nearest to the second one that the first one's chain holds
// (Buildbot looks for the second commit itself in the first chain before walking its
// parents, which is the same rule at distance 0).
//
// Where Buildbot and this differ (docs/compatibility.md, "Buildbot 4.3"): both commits must
// be of the codebase the path names (Buildbot reads neither's codebase), and when the second
// commit is an ancestor of the first, `to1` starts at it, as Buildbot documents the list;
// Buildbot's answer then also holds the second commit's parent, first.
import { type SQLQuery, sql } from '../db/pool.js';

/** Parents followed from each commit at most, as Buildbot's default depth. */
export const COMMIT_RANGE_DEPTH = 100;

/** What the answer holds: the common commit's id and the ids from it to each commit, both ends in. */
export interface CommitRange {
  common: number;
  to1: number[];
  to2: number[];
}

/**
 * SQL for the commit range of `commitid1` and `commitid2` of `codebaseid` as one JSON object
 * (a CommitRange), or NULL when either commit is not of that codebase or they have no common
 * commit within the depth.
 */
export function commitRangeJson(codebaseid: number, commitid1: number, commitid2: number): SQLQuery {
  const chain = (name: string, start: number) => sql`${sql.ident(name)} (id, parent, n) AS (
      SELECT c.id, c.parent_commitid, 0 FROM codebase_commits c
      WHERE c.id = ${start} AND c.codebaseid = ${codebaseid}
      UNION ALL
      SELECT c.id, c.parent_commitid, u.n + 1 FROM ${sql.ident(name)} u
      JOIN codebase_commits c ON c.id = u.parent
      WHERE u.n < ${COMMIT_RANGE_DEPTH})`;
  return sql`(WITH RECURSIVE ${chain('up1', commitid1)}, ${chain('up2', commitid2)},
      meet AS (SELECT u2.id, u1.n AS n1, u2.n AS n2 FROM up2 u2 JOIN up1 u1 ON u1.id = u2.id
               ORDER BY u2.n, u1.n LIMIT 1)
    SELECT json_build_object(
      'common', m.id,
      'to1', (SELECT json_agg(u.id ORDER BY u.n DESC) FROM up1 u WHERE u.n <= m.n1),
      'to2', (SELECT json_agg(u.id ORDER BY u.n DESC) FROM up2 u WHERE u.n <= m.n2))
    FROM meet m)`;
}
