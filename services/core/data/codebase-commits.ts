// A codebase's commits (Buildbot 4.3, db/codebase_commits.py add_commit and
// data/codebase_commits.py): a GitPoller given a codebase adds one per new commit, oldest
// first, each naming the one before it as parent_commitid (the first, its git parent when
// that one is recorded), and each is announced as `commits/<id>/new` and
// `codebases/<codebaseid>/commits/<id>/new` with the commit.
// Ours: a revision the codebase already holds (unique (codebaseid, revision)) is not added
// again and not announced; its id is the answer. Buildbot's insert fails there, and the
// poll of that branch with it (a commit reachable from two branches polled at once).
import { maybeOne, type Queryable, sql } from '../db/pool.js';
import { commit } from '../entities/commit.js';
import { commitKeys } from '../events/keys.js';
import { entity } from './entities.js';
import type { Tx } from './transaction.js';

export interface NewCommit {
  codebaseid: number;
  author: string;
  committer: string | null;
  comments: string;
  when_timestamp: number;
  revision: string;
  parent_commitid: number | null;
}

/** Add a commit (announced) and answer its id; the id of the one recorded when the revision is known. */
export async function addCommit(tx: Tx, c: NewCommit): Promise<number> {
  const added = await maybeOne<{ id: number }>(
    tx.q,
    sql`INSERT INTO codebase_commits (codebaseid, author, committer, comments, when_timestamp, revision, parent_commitid)
        VALUES (${c.codebaseid}, ${c.author}, ${c.committer}, ${c.comments}, ${c.when_timestamp}, ${c.revision},
                ${c.parent_commitid})
        ON CONFLICT (codebaseid, revision) DO NOTHING RETURNING id`,
  );
  if (!added) return (await commitByRevision(tx.q, c.codebaseid, c.revision))!;
  tx.out.addAll(
    commitKeys({ commitid: added.id, codebaseid: c.codebaseid }),
    'new',
    await entity(tx.q, commit, added.id),
  );
  return added.id;
}

/** The id of the codebase's commit with this revision, if recorded (get_commit_by_revision). */
export async function commitByRevision(
  q: Queryable,
  codebaseid: number,
  revision: string,
): Promise<number | undefined> {
  const row = await maybeOne<{ id: number }>(
    q,
    sql`SELECT id FROM codebase_commits WHERE codebaseid = ${codebaseid} AND revision = ${revision}`,
  );
  return row?.id;
}
