// Rows the fixture lacks, added to a suite's own copy of it: the oracle was idle when it was
// dumped, so no build is running, no step is pending, every worker is unpaused and no text
// holds what a LIKE pattern would misread. These rows bring NULLs into the nullable fields
// (complete_at, results, started_at, workerid, branch, category, ...), non-ASCII text, and
// a builder with no tags, master or description.
import { type Queryable, sql } from '../../../services/core/db/pool.js';

export const EXTRA = {
  runningBuildid: 1001,
  changeid: 1001,
  workerid: 1001,
  builderid: 1001,
} as const;

export async function addExtraRows(db: Queryable): Promise<void> {
  const [{ t }] = await db.query(sql`SELECT max(started_at) + 100 AS t FROM builds`);
  await db.tx(async (tx) => {
    // A build of the pending `deploy` request (101), started but with no worker, end or result.
    await tx.query(sql`
      INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at,
                          complete_at, state_string, results)
      SELECT ${EXTRA.runningBuildid}, 1, br.builderid, br.id, NULL, 1, ${t}, NULL, 'building', NULL
      FROM buildrequests br WHERE br.id = 101`);
    await tx.query(sql`
      INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results,
                         urls_json, hidden)
      VALUES (5001, 0, 'worker_preparation', ${EXTRA.runningBuildid}, ${t}, ${t + 1}, 'worker ready', 0, '[]', 0),
             (5002, 1, 'compile', ${EXTRA.runningBuildid}, ${t + 1}, NULL, 'compiling', NULL,
              '[{"name": "log", "url": "http://example.invalid/"}]', 0),
             (5003, 2, 'upload', ${EXTRA.runningBuildid}, NULL, NULL, 'pending', NULL, '[]', 1)`);
    await tx.query(sql`
      INSERT INTO changes (changeid, author, committer, comments, branch, revision, revlink,
                           when_timestamp, category, repository, codebase, project, sourcestampid,
                           parent_changeids)
      VALUES (${EXTRA.changeid}, 'Zoë <zoe@example.invalid>', NULL, '100%_done: naïve ✓ 𝄞 \\_',
              NULL, NULL, NULL, ${t}, NULL, 'https://example.invalid/ünïcode.git', 'lib',
              'oracle', (SELECT min(id) FROM sourcestamps), 1)`);
    await tx.query(sql`
      INSERT INTO change_files (changeid, filename) VALUES (${EXTRA.changeid}, 'docs/100%_done.md'),
                                                           (${EXTRA.changeid}, 'README.md')`);
    await tx.query(sql`
      INSERT INTO workers (id, name, info, paused, graceful)
      VALUES (${EXTRA.workerid}, 'paused-worker', '{"host": "nowhere"}', 1, 1)`);
    await tx.query(sql`
      INSERT INTO builders (id, name, description, name_hash)
      VALUES (${EXTRA.builderid}, 'untagged', NULL, md5('untagged'))`);
  });
}
