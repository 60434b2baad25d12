// One build of the oracle's fixture and everything around it (its builder, request, step,
// log, build data, test result set, change, worker, master, schedulers), and how to fill a
// registry pattern's parameters with those ids: so that a suite walking every endpoint
// (endpoints.test.ts, auth/hidden-builders.test.ts) names real rows, and fails on a new
// parameter until it is taught how to bind it.
import type { Endpoint } from '../../../services/api/registry/model.js';
import { nameHash } from '../../../services/core/data/names.js';
import { type Queryable, sql } from '../../../services/core/db/pool.js';
import { oracleForceSchedulers } from './harness.js';

/** Ids of one build of the fixture and everything around it, all of which exist. */
export interface Context {
  buildid: number;
  number: number;
  builderid: number;
  buildername: string;
  buildrequestid: number;
  bsid: number;
  workerid: number;
  workername: string;
  masterid: number;
  stepid: number;
  step_name: string;
  step_number: number;
  logid: number;
  log_slug: string;
  log_type: string;
  data_name: string;
  test_result_setid: number;
  changeid: number;
  ssid: number;
  changesourceid: number;
  schedulerid: number;
  schedulername: string;
  /** A build that triggered others (a build set's parent_buildid), for its triggered_builds. */
  triggering_buildid: number;
  /** One of the builds it triggered. */
  triggered_buildid: number;
  /** Buildbot 4.3's: the 3.7 fixture has no project, so fixtureContext makes one of the build's builder. */
  projectid: number;
  projectname: string;
  /** A codebase of that project, one of its commits and a branch at it (Buildbot 4.3's too). */
  codebaseid: number;
  codebasename: string;
  commitid: number;
  revision: string;
  branchid: number;
  /** Flotilla's own: the fixture has no artifacts, so a suite that reads them adds one. */
  artifactid?: number;
}

// A build whose step has logs and a test result set, with build data and properties, whose
// newest change has properties, on a worker configured for its builder on its master.
const IDENT = '^[a-zA-Z_-][.a-zA-Z0-9_-]*$';
const CONTEXT_SQL = sql`
  SELECT b.id AS buildid, b.number, b.builderid, bl.name AS buildername, b.buildrequestid,
         br.buildsetid AS bsid, b.workerid, w.name AS workername, b.masterid,
         st.id AS stepid, st.name AS step_name, st.number AS step_number,
         l.id AS logid, l.slug AS log_slug, l.type AS log_type, d.name AS data_name,
         trs.id AS test_result_setid, ch.changeid, ch.sourcestampid AS ssid,
         (SELECT csm.changesourceid FROM changesource_masters csm WHERE csm.masterid = b.masterid
           ORDER BY 1 LIMIT 1) AS changesourceid,
         (SELECT sm.schedulerid FROM scheduler_masters sm WHERE sm.masterid = b.masterid
           ORDER BY 1 LIMIT 1) AS schedulerid,
         (SELECT min(bs.parent_buildid) FROM buildsets bs) AS triggering_buildid,
         (SELECT min(tb.id) FROM builds tb JOIN buildrequests tbr ON tbr.id = tb.buildrequestid
           JOIN buildsets tbs ON tbs.id = tbr.buildsetid
           WHERE tbs.parent_buildid = (SELECT min(bs.parent_buildid) FROM buildsets bs)) AS triggered_buildid
  FROM builds b
  JOIN builders bl ON bl.id = b.builderid
  JOIN workers w ON w.id = b.workerid
  JOIN buildrequests br ON br.id = b.buildrequestid
  JOIN test_result_sets trs ON trs.buildid = b.id
  JOIN steps st ON st.id = trs.stepid
  JOIN LATERAL (SELECT * FROM logs l WHERE l.stepid = st.id AND l.slug ~ ${IDENT}
                ORDER BY l.id LIMIT 1) l ON true
  JOIN LATERAL (SELECT * FROM build_data d WHERE d.buildid = b.id ORDER BY d.name LIMIT 1) d ON true
  JOIN LATERAL (SELECT c.* FROM changes c
                JOIN buildset_sourcestamps bss ON bss.sourcestampid = c.sourcestampid
                WHERE bss.buildsetid = br.buildsetid ORDER BY c.changeid DESC LIMIT 1) ch ON true
  WHERE st.name ~ ${IDENT} AND bl.name ~ ${IDENT} AND w.name ~ ${IDENT} AND d.name ~ ${IDENT}
    AND EXISTS (SELECT 1 FROM change_properties cp WHERE cp.changeid = ch.changeid)
    AND EXISTS (SELECT 1 FROM buildset_properties bp WHERE bp.buildsetid = br.buildsetid)
    AND EXISTS (SELECT 1 FROM build_properties p WHERE p.buildid = b.id)
    AND EXISTS (SELECT 1 FROM test_results tr WHERE tr.test_result_setid = trs.id)
    AND EXISTS (SELECT 1 FROM configured_workers cw JOIN builder_masters bm ON bm.id = cw.buildermasterid
                WHERE cw.workerid = w.id AND bm.builderid = b.builderid AND bm.masterid = b.masterid)
  ORDER BY b.id LIMIT 1`;

/** The value a path parameter takes in the context. */
function bind(pattern: string, param: string, c: Context): string | number {
  switch (param) {
    case 'name':
      if (pattern.includes('workers/i:name')) return c.workername;
      if (pattern.includes('data/i:name')) return c.data_name;
      break;
    case 'build_number':
      return c.number;
    case 'buildid':
      return pattern.endsWith('/triggered_builds') ? c.triggering_buildid : c.buildid;
    case 'buildsetid':
      return c.bsid;
    // The commit range of one commit with itself: that commit (Buildbot 4.3 answers it too).
    case 'commitid1':
    case 'commitid2':
      return c.commitid;
    default: {
      const v = c[param as keyof Context];
      if (v !== undefined) return v;
    }
  }
  throw new Error(`cannot bind :${param} of '${pattern}'; teach bind() about it`);
}

export interface Param {
  name: string;
  kind: 'n' | 'i' | 'any';
  index: number;
}

export function paramsOf(pattern: string): Param[] {
  if (pattern === '') return [];
  return pattern.split('/').flatMap((seg, index) => {
    const m = /^(n|i|s)?:([a-z0-9_.]+)$/.exec(seg);
    const kind = m?.[1] === 'n' || m?.[1] === 'i' ? m[1] : 'any';
    return m ? [{ name: m[2]!, kind: kind as Param['kind'], index }] : [];
  });
}

export function pathOf(pattern: string, c: Context, missing?: Param): string {
  if (pattern === '') return '';
  const segs = pattern.split('/');
  for (const p of paramsOf(pattern)) {
    const value =
      p.index === missing?.index ? (p.kind === 'n' ? 999999 : `no-such-${p.name}`) : bind(pattern, p.name, c);
    segs[p.index] = encodeURIComponent(String(value));
  }
  return `/${segs.join('/')}`;
}

// Readable by GET only through their sub-paths: /steps/N itself, and the `logchunks` root
// link (Buildbot fails on it; it names no log). Both are 404 whatever the ids.
export const NOT_READABLE = (e: Endpoint) =>
  e.noGet === true || (e.kind === 'logchunk' && paramsOf(e.pattern).length === 0);

/** The context on a copy of the fixture, with the force scheduler of its builder. */
export async function fixtureContext(db: Queryable): Promise<Context> {
  const rows = await db.query(CONTEXT_SQL);
  if (rows.length !== 1) throw new Error('the fixture has no build with everything CONTEXT_SQL reads');
  const ctx = rows[0] as Context;
  const force = oracleForceSchedulers().find((f) => f.builderNames.includes(ctx.buildername));
  if (!force) throw new Error(`no force scheduler for builder ${ctx.buildername}`);
  ctx.schedulername = force.name;
  // As Buildbot 4.3's find_project_id makes one (its slug is its name), once per copy.
  const [project] = await db.query(sql`
    INSERT INTO projects (name, name_hash, slug) VALUES ('flotilla', ${nameHash('flotilla')}, 'flotilla')
    ON CONFLICT (name_hash) DO UPDATE SET name = EXCLUDED.name RETURNING id, name`);
  await db.query(sql`UPDATE builders SET projectid = ${project.id} WHERE id = ${ctx.builderid}`);
  ctx.projectid = project.id;
  ctx.projectname = project.name;
  const [cb] = await db.query(sql`
    INSERT INTO codebases (projectid, name, slug, name_hash) VALUES (${project.id}, 'main', 'main', ${nameHash('main')})
    ON CONFLICT (projectid, name_hash) DO UPDATE SET slug = EXCLUDED.slug RETURNING id, name`);
  const [commit] = await db.query(sql`
    INSERT INTO codebase_commits (codebaseid, author, comments, when_timestamp, revision)
    VALUES (${cb.id}, 'a <a@example.invalid>', 'first', 1795303931, 'c0ffee')
    ON CONFLICT (codebaseid, revision) DO UPDATE SET comments = EXCLUDED.comments RETURNING id, revision`);
  const [branch] = await db.query(sql`
    INSERT INTO codebase_branches (codebaseid, name, name_hash, commitid, last_timestamp)
    VALUES (${cb.id}, 'main', ${nameHash('main')}, ${commit.id}, 1795303931)
    ON CONFLICT (codebaseid, name_hash) DO UPDATE SET last_timestamp = EXCLUDED.last_timestamp RETURNING id`);
  Object.assign(ctx, {
    codebaseid: cb.id,
    codebasename: cb.name,
    commitid: commit.id,
    revision: commit.revision,
    branchid: branch.id,
  });
  return ctx;
}
