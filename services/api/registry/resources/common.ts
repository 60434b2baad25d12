// SQL fragments several resources share: a source stamp, a master, and properties, each as
// the JSON object Buildbot answers.
import { type SQLQuery, sql } from '../../../core/db/pool.js';
import { type FieldType, t } from '../types.js';

export const patchType = t.entity('patch', [
  { name: 'patchid', type: t.integer },
  { name: 'body', type: t.binary },
  { name: 'level', type: t.integer },
  { name: 'subdir', type: t.string },
  { name: 'author', type: t.string },
  { name: 'comment', type: t.string },
]);

export const sourcestampFields = [
  { name: 'ssid', type: t.integer },
  { name: 'revision', type: t.string, nullable: true },
  { name: 'branch', type: t.string, nullable: true },
  { name: 'repository', type: t.string },
  { name: 'project', type: t.string },
  { name: 'codebase', type: t.string },
  { name: 'patch', type: patchType, nullable: true },
  { name: 'created_at', type: t.datetime },
] as const;

export const sourcestampType: FieldType = t.entity('sourcestamp', sourcestampFields);

export const masterType: FieldType = t.entity('master', [
  { name: 'masterid', type: t.integer },
  { name: 'name', type: t.string },
  { name: 'active', type: t.boolean },
  { name: 'last_active', type: t.datetime },
]);

/**
 * A patch as JSON. Buildbot 3.7 stores the body base64-encoded and answers null for it (its
 * JSON encoder cannot write bytes); we answer the decoded text, as the contract describes.
 */
export function patchJson(patchid: SQLQuery): SQLQuery {
  return sql`(SELECT json_build_object(
      'patchid', p.id, 'level', p.patchlevel, 'subdir', p.subdir, 'author', p.patch_author,
      'comment', p.patch_comment, 'body', convert_from(decode(p.patch_base64, 'base64'), 'UTF8'))
    FROM patches p WHERE p.id = ${patchid})`;
}

/** The JSON of source stamp `ss` (an alias of the sourcestamps table). */
export function sourcestampJson(ss: string): SQLQuery {
  const c = (col: string) => sql.ident(ss, col);
  return sql`json_build_object(
    'ssid', ${c('id')}, 'revision', ${c('revision')}, 'branch', ${c('branch')},
    'repository', ${c('repository')}, 'project', ${c('project')}, 'codebase', ${c('codebase')},
    'created_at', ${c('created_at')}, 'patch', ${patchJson(c('patchid'))})`;
}

/** The master embedded in a scheduler or change source, or null. */
export function masterJson(masterid: SQLQuery): SQLQuery {
  return sql`(SELECT json_build_object('masterid', m.id, 'name', m.name, 'active', m.active <> 0,
      'last_active', m.last_active) FROM masters m WHERE m.id = ${masterid})`;
}

/** `property` values select which properties to return: `*` all, otherwise by name. */
export function propertyNames(names: readonly string[]): { all: boolean; names: string[] } {
  return { all: names.includes('*'), names: names.filter((n) => n !== '*') };
}
