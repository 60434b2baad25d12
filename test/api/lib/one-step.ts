// A migrated (empty) database's first build: master 1, builder 1, buildset 1, request 1,
// build 1 and its step 1, all finished, for a suite that adds logs of its own to step 1.
import { type Queryable, sql } from '../../../services/core/db/pool.js';

export async function addOneStep(db: Queryable, name: string): Promise<void> {
  const master = `${name}:/m`;
  const setup = [
    sql`INSERT INTO masters (id, name, name_hash, active, last_active) VALUES (1, ${master}, md5(${master}), 1, 0)`,
    sql`INSERT INTO builders (id, name, description, name_hash) VALUES (1, ${name}, NULL, md5(${name}))`,
    sql`INSERT INTO buildsets (id, reason, submitted_at, complete, complete_at, results) VALUES (1, 'r', 0, 1, 1, 0)`,
    sql`INSERT INTO buildrequests (id, buildsetid, builderid, priority, complete, results, submitted_at, complete_at)
        VALUES (1, 1, 1, 0, 1, 0, 0, 1)`,
    sql`INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at, complete_at,
                            state_string, results) VALUES (1, 1, 1, 1, NULL, 1, 0, 1, 'done', 0)`,
    sql`INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
        VALUES (1, 0, ${name}, 1, 0, 1, 'done', 0, '[]', 0)`,
  ];
  for (const q of setup) await db.query(q);
}
