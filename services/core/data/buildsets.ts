// Build sets: addBuildset creates one with a build request per builder; maybeBuildsetComplete
// completes it when its last request completes, with the worst of their results.
import { many, maybeOne, one, type Queryable, type SQLQuery, sql } from '../db/pool.js';
import { buildrequest } from '../entities/buildrequest.js';
import { buildsetSourcestampsJson } from '../entities/sourcestamp.js';
import { noSuch } from '../errors.js';
import { buildrequestKeys, buildsetKeys } from '../events/keys.js';
import { Results, worst } from '../results.js';
import { entity } from './entities.js';
import { findOrCreateSourceStamp, type SourceStampSpec } from './sourcestamps.js';
import { now, type Tx } from './transaction.js';

export interface NewBuildset {
  /** Scheduler name, carried in the `new` event. */
  scheduler: string;
  /** Existing source stamp ids, or stamps to find or create. */
  sourcestamps: readonly (number | SourceStampSpec)[];
  reason: string;
  /** name -> [value, source] */
  properties?: Record<string, readonly [unknown, string]>;
  builderids: readonly number[];
  waited_for?: boolean;
  external_idstring?: string | null;
  parent_buildid?: number | null;
  parent_relationship?: string | null;
  priority?: number;
  /** Buildbot 4.0: the build a rebuild repeats (the first one, through rebuilds of rebuilds). */
  rebuilt_buildid?: number | null;
}

export interface AddedBuildset {
  bsid: number;
  /** builderid -> build request id */
  brids: Record<number, number>;
}

/** The build set's source stamps as its events carry them (the read API's shape). */
async function sourcestampsOf(tx: Tx, bsid: number): Promise<unknown[]> {
  const row = await one<{ s: unknown[] }>(
    tx.q,
    sql`SELECT ${buildsetSourcestampsJson(sql`${bsid}::int`)} AS s`,
  );
  return row.s;
}

export async function addBuildset(tx: Tx, b: NewBuildset): Promise<AddedBuildset> {
  const submitted = now();
  const ssids: number[] = [];
  for (const ss of b.sourcestamps)
    ssids.push(typeof ss === 'number' ? ss : await findOrCreateSourceStamp(tx, ss));
  const { id: bsid } = await one<{ id: number }>(
    tx.q,
    sql`INSERT INTO buildsets (external_idstring, reason, submitted_at, complete, complete_at, results,
                               parent_buildid, parent_relationship, rebuilt_buildid)
        VALUES (${b.external_idstring ?? null}, ${b.reason}, ${submitted}, 0, NULL, -1,
                ${b.parent_buildid ?? null}, ${b.parent_relationship ?? null}, ${b.rebuilt_buildid ?? null})
        RETURNING id`,
  );
  const props = Object.entries(b.properties ?? {});
  if (props.length) {
    await tx.q.query(sql`
      INSERT INTO buildset_properties (buildsetid, property_name, property_value)
      SELECT ${bsid}, n, v FROM unnest(${props.map(([n]) => n)}::text[], ${props.map(([, v]) => JSON.stringify(v))}::text[]) AS x(n, v)`);
  }
  if (ssids.length) {
    await tx.q.query(sql`
      INSERT INTO buildset_sourcestamps (buildsetid, sourcestampid)
      SELECT ${bsid}, s FROM unnest(${ssids}::int[]) WITH ORDINALITY AS x(s, o) ORDER BY o`);
  }
  const brids: Record<number, number> = {};
  for (const builderid of b.builderids) {
    const br = await one<{ id: number }>(
      tx.q,
      sql`INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at, complete_at, waited_for)
          VALUES (${bsid}, ${builderid}, ${b.priority ?? 0}, 0, -1, ${submitted}, NULL, ${b.waited_for ? 1 : 0})
          RETURNING id`,
    );
    brids[builderid] = br.id;
  }

  // Events: each request's `new`, then the build set's (with its full source stamps).
  for (const [builderid, brid] of Object.entries(brids)) {
    tx.out.addAll(
      buildrequestKeys(bsid, Number(builderid), brid),
      'new',
      await entity(tx.q, buildrequest, brid),
    );
  }
  const ss = await sourcestampsOf(tx, bsid);
  tx.out.addAll(buildsetKeys(bsid), 'new', {
    bsid,
    external_idstring: b.external_idstring ?? null,
    reason: b.reason,
    submitted_at: submitted,
    complete: false,
    complete_at: null,
    results: null,
    scheduler: b.scheduler,
    sourcestamps: ss,
  });
  if (b.builderids.length === 0) await maybeBuildsetComplete(tx, bsid);
  return { bsid, brids };
}

export { buildrequestKeys };

/**
 * Buildbot's rebuildBuildrequest: a new build set for the builder of build `buildid`, with
 * its build set's source stamps, properties, external id and parent; reason `rebuild`. As
 * Buildbot 4.0's, it records in `rebuilt_buildid` the first build of the request, or, when
 * the build set is itself a rebuild, the build that one repeated: every rebuild names the
 * original.
 */
export async function rebuildBuild(tx: Tx, buildid: number): Promise<AddedBuildset> {
  const b = await maybeOne<{
    builderid: number;
    bsid: number;
    external_idstring: string | null;
    parent_buildid: number | null;
    parent_relationship: string | null;
    rebuilt_buildid: number | null;
  }>(
    tx.q,
    sql`SELECT br.builderid, bs.id AS bsid, bs.external_idstring, bs.parent_buildid, bs.parent_relationship,
               coalesce(bs.rebuilt_buildid, (SELECT min(f.id) FROM builds f WHERE f.buildrequestid = br.id))
                 AS rebuilt_buildid
        FROM builds b JOIN buildrequests br ON br.id = b.buildrequestid JOIN buildsets bs ON bs.id = br.buildsetid
        WHERE b.id = ${buildid}`,
  );
  if (!b) throw noSuch(`build ${buildid}`);
  const ss = await many<{ sourcestampid: number }>(
    tx.q,
    sql`SELECT sourcestampid FROM buildset_sourcestamps WHERE buildsetid = ${b.bsid} ORDER BY id`,
  );
  const props = await many<{ property_name: string; pair: unknown }>(
    tx.q,
    sql`SELECT property_name, flotilla.try_json(property_value) AS pair FROM buildset_properties
        WHERE buildsetid = ${b.bsid}`,
  );
  const properties: Record<string, [unknown, string]> = {};
  for (const p of props)
    if (Array.isArray(p.pair) && p.pair.length === 2)
      properties[p.property_name] = p.pair as [unknown, string];
  return addBuildset(tx, {
    scheduler: 'rebuild',
    sourcestamps: ss.map((r) => r.sourcestampid),
    reason: 'rebuild',
    properties,
    builderids: [b.builderid],
    external_idstring: b.external_idstring,
    parent_buildid: b.parent_buildid,
    parent_relationship: b.parent_relationship,
    rebuilt_buildid: b.rebuilt_buildid,
  });
}

export async function maybeBuildsetComplete(tx: Tx, bsid: number): Promise<boolean> {
  // Lock the build set so that two masters finishing its last requests complete it once.
  const bs = await maybeOne<{
    complete: number;
    reason: string | null;
    external_idstring: string | null;
    submitted_at: number;
  }>(
    tx.q,
    sql`SELECT complete, reason, external_idstring, submitted_at FROM buildsets WHERE id = ${bsid} FOR NO KEY UPDATE`,
  );
  if (!bs || bs.complete) return false;
  const reqs = await many<{ complete: number | null; results: number }>(
    tx.q,
    sql`SELECT complete, results FROM buildrequests WHERE buildsetid = ${bsid}`,
  );
  if (reqs.some((r) => !r.complete)) return false;
  const results = reqs.reduce<number>((acc, r) => worst(acc, r.results), Results.SUCCESS);
  const completeAt = now();
  await tx.q.query(
    sql`UPDATE buildsets SET complete = 1, complete_at = ${completeAt}, results = ${results} WHERE id = ${bsid}`,
  );
  tx.out.addAll(buildsetKeys(bsid), 'complete', {
    bsid,
    external_idstring: bs.external_idstring,
    reason: bs.reason,
    sourcestamps: await sourcestampsOf(tx, bsid),
    submitted_at: bs.submitted_at,
    complete: true,
    complete_at: completeAt,
    results,
  });
  return true;
}

/** The source stamps of a build set, in the order they were given. */
export async function buildsetSourceStampIds(q: Queryable, bsid: number): Promise<number[]> {
  const rows = await many<{ sourcestampid: number }>(
    q,
    sql`SELECT sourcestampid FROM buildset_sourcestamps WHERE buildsetid = ${bsid} ORDER BY id`,
  );
  return rows.map((r) => r.sourcestampid);
}

export interface SourceStampFacts {
  ssid: number;
  branch: string | null;
  revision: string | null;
  repository: string;
  project: string;
  codebase: string;
}

/** Every source stamp of a build set, one per codebase, in the order they were given. */
export function buildsetSourceStamps(q: Queryable, bsid: number): Promise<SourceStampFacts[]> {
  return many(
    q,
    sql`
    SELECT ss.id AS ssid, ss.branch, ss.revision, ss.repository, ss.project, ss.codebase
    FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
    WHERE bss.buildsetid = ${bsid} ORDER BY bss.id`,
  );
}

/** The source stamp a build takes its branch, revision... from: the default codebase's, else the first. */
export function buildsetMainSourceStamp(
  q: Queryable,
  bsid: number,
): Promise<
  | { branch: string | null; revision: string | null; repository: string; project: string; codebase: string }
  | undefined
> {
  return maybeOne(q, buildsetMainSourceStampQuery(bsid));
}

/** buildsetMainSourceStamp's statement, for a build's start to read with its other facts (build-start.ts). */
export const buildsetMainSourceStampQuery = (bsid: number): SQLQuery => sql`
    SELECT ss.branch, ss.revision, ss.repository, ss.project, ss.codebase FROM buildset_sourcestamps bss
    JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE bss.buildsetid = ${bsid}
    ORDER BY (ss.codebase = '') DESC, bss.id LIMIT 1`;

export interface BuildsetsOutcome {
  /** Every one of the build sets is complete. */
  complete: boolean;
  /** The worst of their results (SUCCESS while none is complete). */
  results: number;
  /** How many of their builds finished with each result, by result code. */
  builds: Map<number, number>;
}

/** Where a group of build sets stands (a trigger step waiting for those it triggered). */
export async function buildsetsOutcome(q: Queryable, bsids: readonly number[]): Promise<BuildsetsOutcome> {
  const ids = [...bsids];
  const sets = await many<{ complete: number; results: number }>(
    q,
    sql`SELECT complete, results FROM buildsets WHERE id = ANY(${ids}::int[])`,
  );
  if (sets.length !== new Set(ids).size) throw noSuch(`build set among ${ids.join(', ')}`);
  const complete = sets.every((s) => s.complete);
  const results = complete
    ? sets.reduce<number>((acc, s) => worst(acc, s.results), Results.SUCCESS)
    : Results.SUCCESS;
  const builds = new Map<number, number>();
  if (complete) {
    const rows = await many<{ results: number; n: number }>(
      q,
      sql`
      SELECT b.results, count(*)::int AS n FROM buildrequests br JOIN builds b ON b.buildrequestid = br.id
      WHERE br.buildsetid = ANY(${ids}::int[]) AND b.results IS NOT NULL GROUP BY b.results`,
    );
    for (const r of rows) builds.set(r.results, r.n);
  }
  return { complete, results, builds };
}

export interface BuildsetOutcome {
  complete: boolean;
  results: number;
  /** Its source stamps, in the order they were given. */
  ssids: number[];
}

/** Whether a build set is complete, with what results, on which stamps; null if there is none. */
export async function buildsetOutcome(q: Queryable, bsid: number): Promise<BuildsetOutcome | null> {
  const bs = await maybeOne<{ complete: number | null; results: number | null }>(
    q,
    sql`SELECT complete, results FROM buildsets WHERE id = ${bsid}`,
  );
  if (!bs) return null;
  return {
    complete: Boolean(bs.complete),
    results: bs.results ?? -1,
    ssids: await buildsetSourceStampIds(q, bsid),
  };
}
