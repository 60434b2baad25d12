// Source stamps, with their patch; also the shape of the source stamps that build sets and
// changes carry (so these fields take the alias of the row they read).
import { type SQLQuery, sql } from '../db/pool.js';
import { type Entity, type Field, field, jsonOf } from './field.js';
import { t } from './types.js';

/**
 * A patch. Buildbot 3.7 stores the body base64-encoded and answers null for it (its JSON
 * encoder cannot write bytes); we answer the decoded text, as the contract describes.
 */
function patchFields(p: string): Field[] {
  const c = (col: string) => sql.ident(p, col);
  return [
    field('patchid', t.integer, c('id')),
    field('body', t.binary, sql`convert_from(decode(${c('patch_base64')}, 'base64'), 'UTF8')`),
    field('level', t.integer, c('patchlevel')),
    field('subdir', t.string, c('subdir')),
    field('author', t.string, c('patch_author')),
    field('comment', t.string, c('patch_comment')),
  ];
}

export const patchType = t.entity('patch', patchFields('p'));

/** The source stamp fields over the sourcestamps row aliased `ss`. */
function sourcestampFields(ss: string): Field[] {
  const c = (col: string) => sql.ident(ss, col);
  return [
    field('ssid', t.integer, c('id')),
    field('revision', t.string, c('revision'), { nullable: true }),
    field('branch', t.string, c('branch'), { nullable: true }),
    field('repository', t.string, c('repository')),
    field('project', t.string, c('project')),
    field('codebase', t.string, c('codebase')),
    field(
      'patch',
      patchType,
      sql`(SELECT ${jsonOf(patchFields('p'))} FROM patches p WHERE p.id = ${c('patchid')})`,
      {
        nullable: true,
      },
    ),
    field('created_at', t.datetime, c('created_at')),
  ];
}

export const sourcestamp: Entity = {
  name: 'sourcestamp',
  plural: 'sourcestamps',
  key: 'ssid',
  table: 'sourcestamps',
  fields: sourcestampFields('a'),
};

export const sourcestampType = t.entity('sourcestamp', sourcestamp.fields);

/** The source stamp with id `ssid` as JSON, or null. */
export function sourcestampJson(ssid: SQLQuery): SQLQuery {
  return sql`(SELECT ${jsonOf(sourcestampFields('ss'))} FROM sourcestamps ss WHERE ss.id = ${ssid})`;
}

/** The source stamps of build set `bsid` as a JSON array, in the order they were added. */
export function buildsetSourcestampsJson(bsid: SQLQuery): SQLQuery {
  return sql`(SELECT coalesce(json_agg(${jsonOf(sourcestampFields('ss'))} ORDER BY bss.id), '[]'::json)
    FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
    WHERE bss.buildsetid = ${bsid})`;
}
