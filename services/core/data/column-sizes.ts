// The sizes of the text columns a build set and its source stamps are written to (migration
// 0001, Buildbot 3.7's schema): a caller that takes these values from outside (a try job)
// checks them here first, so that a value too long is refused by name instead of failing the
// transaction in PostgreSQL (22001, nothing written and no field named).

/** sourcestamps: varchar(256) and varchar(512). */
export const SOURCESTAMP_COLUMN_SIZES = {
  branch: 256,
  revision: 256,
  repository: 512,
  project: 512,
  codebase: 256,
} as const;

/** buildsets: varchar(256). */
export const BUILDSET_COLUMN_SIZES = {
  external_idstring: 256,
  reason: 256,
} as const;

/** buildset_properties.property_name: varchar(256). */
export const PROPERTY_NAME_SIZE = 256;
