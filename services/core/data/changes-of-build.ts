// The changes of a build (`/builds/{id}/changes`, `/builders/{id}/builds/{n}/changes`) and
// the newest change of a source stamp (`/sourcestamps/{id}/changes`): predicates on the changes
// table under the alias `a`, which the API's registry (services/api/registry/resources/
// changes.ts) gives its query engine as those endpoints' scope.
import { type SQLQuery, sql } from '../db/pool.js';

// The changes of a build: for each of its source stamps, the newest change of that stamp and
// its ancestors, back to (not including) the change built by the previous successful build of
// the same builder with the same repository, branch and codebase set.
//
// That previous build is Buildbot's getPrevSuccessfulBuild: the newest by complete_at. The
// builder and number are taken from `cur` as scalars, so that migration 0033's index of
// successful builds by (builderid, complete_at DESC NULLS LAST), carrying number, id and
// buildrequestid (an index-only scan: 0028's, which it replaced, visited a row per build passed),
// yields them in that order and
// the scan stops at the first whose stamps match. Joined to `cur` instead, the planner
// compared the stamps of every successful build of the builder, then sorted (with the index
// too). EXPLAIN ANALYZE of `SELECT a.changeid FROM changes a WHERE <this fragment, ${buildid}
// as :buildid> ORDER BY a.changeid DESC LIMIT 50` (psql URL -v buildid=50000 -f FILE) on the
// generated set at scale 0.1 (load/bench/cluster.sh db NAME; load/generate/run.sh URL 0.1;
// 10,000 builds per builder): before (1912434) 192 ms, the stamps of 6,403 builds compared;
// the index alone 160 ms; this form alone 93 ms; both 5.2 ms, one build read. At scale 1
// (the 1M-row set, 100,000 builds per builder, build 500000; load average 15): before
// 1.7-1.8 s, 64,029 builds compared; after 1.1-1.6 ms.
/**
 * A stamp's (repository, branch, codebase) as one text, Buildbot's match of stamps; written as
 * migration 0041's index of sourcestamps has it, so that the planner finds that index.
 */
const STAMP_KEY = (alias: string) =>
  sql`(${sql.ident(alias)}.repository || chr(1) || coalesce(${sql.ident(alias)}.branch, chr(2)) || chr(1) || ${sql.ident(alias)}.codebase)`;

/** The sorted keys of the stamps of a build request's buildset: two builds match when equal. */
const stampKeyOf = (brid: SQLQuery) => sql`(
  SELECT array_agg(DISTINCT ${STAMP_KEY('s2')} ORDER BY ${STAMP_KEY('s2')})
  FROM buildrequests br2 JOIN buildset_sourcestamps bss2 ON bss2.buildsetid = br2.buildsetid
  JOIN sourcestamps s2 ON s2.id = bss2.sourcestampid WHERE br2.id = ${brid})`;

/**
 * How many of the builder's newest successes are compared before looking from the stamps'
 * side instead. Each comparison reads a request, its buildset's stamps and each stamp, about
 * 11 buffers: the 100 cost 1,129 (EXPLAIN (ANALYZE, BUFFERS) of /builds/2399000/changes on
 * the fleet set at scale 0.25, load/results/fleet-reads.md). The build asked about usually
 * matches the newest success of its builder; when 100 do not, the builder builds other
 * branches too, and the stamps of its own branch are the shorter way.
 */
const NEAR = 100;

/** `a.changeid` is one of the changes of the build `buildid` (an SQL integer). */
export const changesOfBuild = (buildid: SQLQuery): SQLQuery => sql`a.changeid IN (
  WITH RECURSIVE
    cur AS (SELECT b.id, b.builderid, b.number FROM builds b WHERE b.id = ${buildid}),
    stamps AS (
      SELECT ss.id AS ssid, ss.codebase FROM cur
      JOIN buildrequests br ON br.id = (SELECT buildrequestid FROM builds WHERE id = cur.id)
      JOIN buildset_sourcestamps bss ON bss.buildsetid = br.buildsetid
      JOIN sourcestamps ss ON ss.id = bss.sourcestampid),
    stampset AS (SELECT ${stampKeyOf(sql`(SELECT buildrequestid FROM builds WHERE id = (SELECT id FROM cur))`)} AS k),
    -- how many of the builder's successes before the build are past the NEAR newest
    rest AS (
      SELECT count(*) - ${NEAR} AS n FROM builds pb
      WHERE pb.builderid = (SELECT builderid FROM cur) AND pb.number < (SELECT number FROM cur) AND pb.results = 0),
    prev AS (
      SELECT coalesce(
        -- The builder's newest NEAR successes, newest by completion first (0033's index): the
        -- first whose stamps match is the answer, and almost always it is among them.
        (SELECT n.id FROM (
           SELECT pb.id, pb.buildrequestid, pb.complete_at FROM builds pb
           WHERE pb.builderid = (SELECT builderid FROM cur) AND pb.number < (SELECT number FROM cur)
             AND pb.results = 0
           ORDER BY pb.complete_at DESC NULLS LAST LIMIT ${NEAR}) n
         WHERE ${stampKeyOf(sql`n.buildrequestid`)} = (SELECT k FROM stampset)
         ORDER BY n.complete_at DESC NULLS LAST LIMIT 1),
        -- None of them: the rest of the builder's successes, or the builds of the stamps with
        -- the build's first key (0041's index), whichever are fewer (the successes counted from
        -- 0041's index alone). The successes alone made a build whose branch none of them built (a
        -- new branch; the fleet set's broken release builders, 8,000 successes at 10M builds)
        -- compare every one; the stamps alone made a builder with no success at all look up
        -- every stamp of its branch (2,250 at 2.5M builds: 4,297 buffers a read on average
        -- instead of 2,030). The stamps are counted only up to the successes left (the count
        -- visits each stamp's row: no index-only scan of an expression index). Each part is
        -- evaluated only when coalesce and CASE come to it.
        CASE WHEN (SELECT n FROM rest) <= 0 THEN NULL
             WHEN (SELECT n FROM rest) <= (SELECT count(*) FROM (
                    SELECT FROM sourcestamps s WHERE ${STAMP_KEY('s')} = (SELECT k[1] FROM stampset)
                    LIMIT (SELECT n FROM rest)) x)
        THEN (SELECT n.id FROM (
                SELECT pb.id, pb.buildrequestid, pb.complete_at FROM builds pb
                WHERE pb.builderid = (SELECT builderid FROM cur) AND pb.number < (SELECT number FROM cur)
                  AND pb.results = 0
                ORDER BY pb.complete_at DESC NULLS LAST OFFSET ${NEAR}) n
              WHERE ${stampKeyOf(sql`n.buildrequestid`)} = (SELECT k FROM stampset)
              ORDER BY n.complete_at DESC NULLS LAST LIMIT 1)
        -- Each step a LATERAL ... OFFSET 0, an index lookup a row of the step before, and the
        -- stamps compared only for the builds found: the key is known only as the statement
        -- runs, and estimated at a few thousand stamps the planner hashed every buildset's
        -- stamps instead (251 ms for the 507 stamps of a branch at 2.5M builds), or, on a small
        -- table, compared the stamps of every success of the builder before joining.
        ELSE (SELECT pb.id FROM sourcestamps s
         CROSS JOIN LATERAL (SELECT bss.buildsetid FROM buildset_sourcestamps bss
                             WHERE bss.sourcestampid = s.id OFFSET 0) bss
         CROSS JOIN LATERAL (SELECT br.id FROM buildrequests br
                             WHERE br.buildsetid = bss.buildsetid AND br.builderid = (SELECT builderid FROM cur)
                             OFFSET 0) br
         CROSS JOIN LATERAL (SELECT pb.id, pb.buildrequestid, pb.complete_at FROM builds pb
                             WHERE pb.buildrequestid = br.id AND pb.results = 0 AND pb.number < (SELECT number FROM cur)
                             OFFSET 0) pb
         WHERE ${STAMP_KEY('s')} = (SELECT k[1] FROM stampset)
           AND ${stampKeyOf(sql`pb.buildrequestid`)} = (SELECT k FROM stampset)
         ORDER BY pb.complete_at DESC NULLS LAST LIMIT 1) END) AS id),
    stop AS (
      SELECT ss.codebase, (SELECT c.changeid FROM changes c WHERE c.sourcestampid = ss.id ORDER BY c.changeid DESC LIMIT 1) AS changeid
      FROM prev JOIN builds pb ON pb.id = prev.id
      JOIN buildrequests br ON br.id = pb.buildrequestid
      JOIN buildset_sourcestamps bss ON bss.buildsetid = br.buildsetid
      JOIN sourcestamps ss ON ss.id = bss.sourcestampid),
    walk AS (
      SELECT c.changeid, c.parent_changeids, st.codebase, 1 AS depth
      FROM stamps st
      JOIN LATERAL (SELECT * FROM changes c WHERE c.sourcestampid = st.ssid ORDER BY c.changeid DESC LIMIT 1) c ON true
      WHERE c.changeid IS DISTINCT FROM (SELECT changeid FROM stop WHERE stop.codebase = st.codebase LIMIT 1)
      UNION ALL
      SELECT p.changeid, p.parent_changeids, w.codebase, w.depth + 1
      FROM walk w JOIN changes p ON p.changeid = w.parent_changeids
      WHERE w.parent_changeids IS DISTINCT FROM (SELECT changeid FROM stop WHERE stop.codebase = w.codebase LIMIT 1)
        AND w.depth < 10000)
  SELECT changeid FROM walk)`;

/** `a.changeid` is the newest change of the source stamp `ssid`: Buildbot answers only that one. */
export const newestChangeOfStamp = (ssid: unknown): SQLQuery =>
  sql`a.changeid = (SELECT c.changeid FROM changes c WHERE c.sourcestampid = ${ssid} ORDER BY c.changeid DESC LIMIT 1)`;
