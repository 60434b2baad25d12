// Users behind changes: Buildbot's createUserObject (buildbot/process/users/users.py) and
// findUserByAttr (buildbot/db/users.py). A change from a known version-control system
// (git, svn, hg, cvs, darcs, bzr, fossil) names its author as a user: users_info
// (attr_type = the system, attr_data = the author) finds it, or a user is created with the
// author as identifier (incrementIdentifier(256) on a clash: `alice`, `alice_2`...).
// users_info.attr_data is varchar(128): an author longer than that is linked to no user
// (Buildbot on PostgreSQL would fail the whole change).
import { maybeOne, one, sql } from '../db/pool.js';
import { codePoints, incrementIdentifier } from '../identifiers.js';
import type { Tx } from './transaction.js';

export const USER_SOURCES = ['git', 'svn', 'hg', 'cvs', 'darcs', 'bzr', 'fossil'] as const;

/** The uid of the change's author for `src`, created if needed; null when there is none. */
export async function createUserObject(
  tx: Tx,
  author: string,
  src: string | null | undefined,
): Promise<number | null> {
  if (!src || !(USER_SOURCES as readonly string[]).includes(src)) return null;
  if (codePoints(author) > 128 || codePoints(author) === 0) return null;
  return findUserByAttr(tx, author, src, author);
}

export async function findUserByAttr(
  tx: Tx,
  identifier: string,
  attrType: string,
  attrData: string,
): Promise<number> {
  const byAttr = sql`SELECT uid FROM users_info WHERE attr_type = ${attrType} AND attr_data = ${attrData}`;
  const found = await maybeOne<{ uid: number }>(tx.q, byAttr);
  if (found) return found.uid;
  let ident = identifier;
  let uid: number | undefined;
  while (uid === undefined) {
    const row = await maybeOne<{ uid: number }>(
      tx.q,
      sql`INSERT INTO users (identifier) VALUES (${ident}) ON CONFLICT DO NOTHING RETURNING uid`,
    );
    if (row) uid = row.uid;
    else ident = incrementIdentifier(256, ident);
  }
  const info = await maybeOne<{ uid: number }>(
    tx.q,
    sql`INSERT INTO users_info (uid, attr_type, attr_data) VALUES (${uid}, ${attrType}, ${attrData})
        ON CONFLICT DO NOTHING RETURNING uid`,
  );
  if (info) return uid;
  // Someone created the same user meanwhile: use theirs, drop ours.
  await tx.q.query(sql`DELETE FROM users WHERE uid = ${uid}`);
  return (await one<{ uid: number }>(tx.q, byAttr)).uid;
}
