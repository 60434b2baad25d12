// Entities as JSON, built in SQL, for event messages and for the read API: a source stamp
// (with its patch), a master, a build request. One definition serves both, so an event
// carries exactly what a GET answers.
import { type SQLQuery, sql } from '../db/pool.js';

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
