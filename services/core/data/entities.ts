// Entities as JSON, built in SQL, for event messages and for the read API: a source stamp
// (with its patch), a master, a build request, a build, a step, a log, a change, a worker, a
// builder, a scheduler. Events carry exactly what a GET answers (test/core/data/entities.test.ts
// holds each equal to the read API on every fixture row); the read registry may use them too.
// Buildbot's events carry its data-layer entity (buildbot/data/*.py db2data): a build's
// `properties` is {} there, a worker's connected_to/configured_on list every master.
import { type Queryable, type SQLQuery, sql } from '../db/pool.js';

/**
 * A patch. Buildbot 3.7 stores the body base64-encoded and answers null for it (its JSON
 * encoder cannot write bytes); we answer the decoded text, as the contract describes.
 */
export function patchJson(patchid: SQLQuery): SQLQuery {
  return sql`(SELECT json_build_object(
      'patchid', p.id, 'level', p.patchlevel, 'subdir', p.subdir, 'author', p.patch_author,
      'comment', p.patch_comment, 'body', convert_from(decode(p.patch_base64, 'base64'), 'UTF8'))
    FROM patches p WHERE p.id = ${patchid})`;
}

/** Source stamp `ss` (an alias of the sourcestamps table) as JSON. */
export function sourcestampJson(ss: string): SQLQuery {
  const c = (col: string) => sql.ident(ss, col);
  return sql`json_build_object(
    'ssid', ${c('id')}, 'revision', ${c('revision')}, 'branch', ${c('branch')},
    'repository', ${c('repository')}, 'project', ${c('project')}, 'codebase', ${c('codebase')},
    'created_at', ${c('created_at')}, 'patch', ${patchJson(c('patchid'))})`;
}

/** The source stamps of build set `bsid` as a JSON array, in the order they were added. */
export function buildsetSourcestampsJson(bsid: SQLQuery): SQLQuery {
  return sql`(SELECT coalesce(json_agg(${sourcestampJson('ss')} ORDER BY bss.id), '[]'::json)
    FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
    WHERE bss.buildsetid = ${bsid})`;
}

/** The master with id `masterid` as JSON, or null. */
export function masterJson(masterid: SQLQuery): SQLQuery {
  return sql`(SELECT json_build_object('masterid', m.id, 'name', m.name, 'active', m.active <> 0,
      'last_active', m.last_active) FROM masters m WHERE m.id = ${masterid})`;
}

/** Build request `br` (an alias of the buildrequests table) as its REST entity. */
export function buildrequestJson(br: string): SQLQuery {
  const c = (col: string) => sql.ident(br, col);
  const claim = (col: string) =>
    sql`(SELECT ${sql.ident('c', col)} FROM buildrequest_claims c WHERE c.brid = ${c('id')})`;
  return sql`json_build_object(
    'buildrequestid', ${c('id')}, 'buildsetid', ${c('buildsetid')}, 'builderid', ${c('builderid')},
    'priority', ${c('priority')},
    'claimed', EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = ${c('id')}),
    'claimed_at', ${claim('claimed_at')}, 'claimed_by_masterid', ${claim('masterid')},
    'complete', coalesce(${c('complete')}, 0) <> 0, 'results', ${c('results')},
    'submitted_at', ${c('submitted_at')}, 'complete_at', ${c('complete_at')},
    'waited_for', coalesce(${c('waited_for')}, 0) <> 0, 'properties', NULL::json)`;
}

/** Build `b` (an alias of builds) as its REST entity; `properties` is {} as in Buildbot's events. */
export function buildJson(b: string): SQLQuery {
  const c = (col: string) => sql.ident(b, col);
  return sql`json_build_object(
    'buildid', ${c('id')}, 'number', ${c('number')}, 'builderid', ${c('builderid')},
    'buildrequestid', ${c('buildrequestid')}, 'workerid', ${c('workerid')}, 'masterid', ${c('masterid')},
    'started_at', ${c('started_at')}, 'complete', ${c('complete_at')} IS NOT NULL,
    'complete_at', ${c('complete_at')}, 'results', ${c('results')}, 'state_string', ${c('state_string')},
    'properties', '{}'::json)`;
}

/** Step `s` (an alias of steps) as its REST entity. */
export function stepJson(s: string): SQLQuery {
  const c = (col: string) => sql.ident(s, col);
  return sql`json_build_object(
    'stepid', ${c('id')}, 'number', ${c('number')}, 'name', ${c('name')}, 'buildid', ${c('buildid')},
    'started_at', ${c('started_at')}, 'complete', ${c('complete_at')} IS NOT NULL,
    'complete_at', ${c('complete_at')}, 'results', ${c('results')}, 'state_string', ${c('state_string')},
    'urls', coalesce(flotilla.try_json(${c('urls_json')}), '[]'::json), 'hidden', ${c('hidden')} <> 0)`;
}

/** Log `l` (an alias of logs) as its REST entity. */
export function logJson(l: string): SQLQuery {
  const c = (col: string) => sql.ident(l, col);
  return sql`json_build_object(
    'logid', ${c('id')}, 'name', ${c('name')}, 'slug', ${c('slug')}, 'stepid', ${c('stepid')},
    'complete', ${c('complete')} <> 0, 'num_lines', ${c('num_lines')}, 'type', ${c('type')})`;
}

/**
 * Change `ch` (an alias of changes) as its REST entity. Files in the order they were added;
 * properties stored as Buildbot stores them, [value, "Change"], any other value taken whole.
 */
export function changeJson(ch: string): SQLQuery {
  const c = (col: string) => sql.ident(ch, col);
  const value = sql`flotilla.try_json(cp.property_value)`;
  const pair = sql`CASE WHEN json_typeof(${value}) = 'array' AND json_array_length(${value}) = 2
      AND json_typeof(${value} -> 1) = 'string' AND ${value} ->> 1 = 'Change'
    THEN ${value} ELSE json_build_array(${value}, 'Change') END`;
  return sql`json_build_object(
    'changeid', ${c('changeid')},
    'parent_changeids', CASE WHEN coalesce(${c('parent_changeids')}, 0) = 0 THEN '[]'::json
                             ELSE json_build_array(${c('parent_changeids')}) END,
    'author', ${c('author')}, 'committer', ${c('committer')},
    'files', (SELECT coalesce(json_agg(cf.filename ORDER BY cf.ctid), '[]'::json)
              FROM change_files cf WHERE cf.changeid = ${c('changeid')}),
    'comments', ${c('comments')}, 'revision', ${c('revision')}, 'when_timestamp', ${c('when_timestamp')},
    'branch', ${c('branch')}, 'category', ${c('category')}, 'revlink', ${c('revlink')},
    'properties', (SELECT coalesce(json_object_agg(cp.property_name, ${pair}), '{}'::json)
                   FROM change_properties cp WHERE cp.changeid = ${c('changeid')} AND ${value} IS NOT NULL),
    'repository', ${c('repository')}, 'project', ${c('project')}, 'codebase', ${c('codebase')},
    'sourcestamp', (SELECT ${sourcestampJson('ss')} FROM sourcestamps ss WHERE ss.id = ${c('sourcestampid')}))`;
}

/** Worker `w` (an alias of workers) as its REST entity, with every master it is on. */
export function workerJson(w: string): SQLQuery {
  const c = (col: string) => sql.ident(w, col);
  return sql`json_build_object(
    'workerid', ${c('id')}, 'name', ${c('name')},
    'connected_to', (SELECT coalesce(json_agg(json_build_object('masterid', cn.masterid) ORDER BY cn.id), '[]'::json)
                     FROM connected_workers cn WHERE cn.workerid = ${c('id')}),
    'configured_on', (SELECT coalesce(json_agg(json_build_object('builderid', bm.builderid, 'masterid', bm.masterid)
                                               ORDER BY cw.id), '[]'::json)
                      FROM configured_workers cw JOIN builder_masters bm ON bm.id = cw.buildermasterid
                      WHERE cw.workerid = ${c('id')}),
    'workerinfo', coalesce(flotilla.try_json(${c('info')}), '{}'::json),
    'paused', ${c('paused')} <> 0, 'graceful', ${c('graceful')} <> 0)`;
}

/** Builder `b` (an alias of builders) as its REST entity. */
export function builderJson(b: string): SQLQuery {
  const c = (col: string) => sql.ident(b, col);
  return sql`json_build_object(
    'builderid', ${c('id')}, 'name', ${c('name')},
    'masterids', (SELECT coalesce(json_agg(bm.masterid ORDER BY bm.masterid), '[]'::json)
                  FROM builder_masters bm WHERE bm.builderid = ${c('id')}),
    'description', ${c('description')},
    'tags', (SELECT coalesce(json_agg(tg.name ORDER BY bt.id), '[]'::json)
             FROM builders_tags bt JOIN tags tg ON tg.id = bt.tagid WHERE bt.builderid = ${c('id')}))`;
}

/** Scheduler `s` (an alias of schedulers) as its REST entity, with the master that runs it. */
export function schedulerJson(s: string): SQLQuery {
  const c = (col: string) => sql.ident(s, col);
  return sql`json_build_object(
    'schedulerid', ${c('id')}, 'name', ${c('name')}, 'enabled', coalesce(${c('enabled')}, 0) <> 0,
    'master', ${masterJson(sql`(SELECT sm.masterid FROM scheduler_masters sm WHERE sm.schedulerid = ${c('id')})`)})`;
}

/** One entity as JSON: `json` over alias `alias` of `table`, for the row with id `id`. */
export async function entity(
  q: Queryable,
  table: string,
  alias: string,
  json: SQLQuery,
  id: number,
  idColumn = 'id',
): Promise<Record<string, unknown> | undefined> {
  const [row] = await q.query(
    sql`SELECT ${json} AS e FROM ${sql.ident(table)} ${sql.ident(alias)} WHERE ${sql.ident(alias, idColumn)} = ${id}`,
  );
  return row?.e;
}
