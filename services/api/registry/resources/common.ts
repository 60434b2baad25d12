// Types several resources share: a source stamp, a patch, a master; and the `property`
// parameter. Their JSON comes from core/data/entities, which events use too.
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

/** `property` values select which properties to return: `*` all, otherwise by name. */
export function propertyNames(names: readonly string[]): { all: boolean; names: string[] } {
  return { all: names.includes('*'), names: names.filter((n) => n !== '*') };
}
