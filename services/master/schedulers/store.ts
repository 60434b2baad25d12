// What the schedulers read from the database beyond the data operations: the changes they
// weigh and a scheduler's enabled flag. (The state they keep between runs is in
// core/data/object-state.ts.)
import type { Tx } from '../../core/data/index.js';
import { sql } from '../../core/db/pool.js';

export interface ChangeFacts {
  changeid: number;
  branch: string | null;
  category: string | null;
  repository: string;
  project: string;
  codebase: string;
  files: string[];
}

const changeColumns = sql`
  c.changeid, c.branch, c.category, c.repository, c.project, c.codebase,
  coalesce((SELECT array_agg(f.filename) FROM change_files f WHERE f.changeid = c.changeid), '{}') AS files`;

function facts(r: Record<string, unknown>): ChangeFacts {
  return {
    changeid: r.changeid as number,
    branch: (r.branch as string | null) ?? null,
    category: (r.category as string | null) ?? null,
    repository: r.repository as string,
    project: r.project as string,
    codebase: r.codebase as string,
    files: r.files as string[],
  };
}

export async function getChange(tx: Tx, changeid: number): Promise<ChangeFacts | null> {
  const [row] = await tx.q.query(sql`SELECT ${changeColumns} FROM changes c WHERE c.changeid = ${changeid}`);
  return row ? facts(row) : null;
}

/** The changes after `changeid`, oldest first, at most `limit`. */
export async function changesAfter(tx: Tx, changeid: number, limit: number): Promise<ChangeFacts[]> {
  const rows = await tx.q.query(sql`
    SELECT ${changeColumns} FROM changes c WHERE c.changeid > ${changeid} ORDER BY c.changeid LIMIT ${limit}`);
  return rows.map(facts);
}

/** The newest change id, 0 when there is none. */
export async function lastChangeId(tx: Tx): Promise<number> {
  const [row] = await tx.q.query(sql`SELECT coalesce(max(changeid), 0) AS id FROM changes`);
  return row.id as number;
}

/** changeid -> (codebase, source stamp) for the given changes. */
export async function changeStamps(
  tx: Tx,
  changeids: readonly number[],
): Promise<{ changeid: number; codebase: string; sourcestampid: number }[]> {
  return (await tx.q.query(sql`
    SELECT changeid, codebase, sourcestampid FROM changes WHERE changeid = ANY(${changeids}::int[])
    ORDER BY changeid`)) as { changeid: number; codebase: string; sourcestampid: number }[];
}

/**
 * The properties of the changes carried by these source stamps, oldest change first (so a
 * newer change's value wins), each as stored: [value, source].
 */
export async function stampChangeProperties(
  tx: Tx,
  sourcestampids: readonly number[],
): Promise<[string, unknown][]> {
  if (sourcestampids.length === 0) return [];
  const rows = await tx.q.query(sql`
    SELECT p.property_name, p.property_value FROM changes c JOIN change_properties p ON p.changeid = c.changeid
    WHERE c.sourcestampid = ANY(${sourcestampids}::int[]) ORDER BY c.changeid, p.property_name`);
  const out: [string, unknown][] = [];
  for (const r of rows) {
    try {
      out.push([r.property_name as string, JSON.parse(r.property_value as string)]);
    } catch {
      // A value Buildbot could not read either: left out.
    }
  }
  return out;
}

export async function schedulerEnabled(tx: Tx, schedulerid: number): Promise<boolean> {
  const [row] = await tx.q.query(sql`SELECT enabled FROM schedulers WHERE id = ${schedulerid}`);
  return row ? Boolean(row.enabled ?? 1) : true;
}
