// The sizes of the text columns that values from outside are written to (migration 0001,
// Buildbot 3.7's schema): a change, a build set and its source stamps. A caller that takes
// such values (a change hook or poller, a try job) checks them against these first, so that a value too long is refused by name instead of failing the
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

/** buildset_properties.property_name and change_properties.property_name: varchar(256). */
export const PROPERTY_NAME_SIZE = 256;

/** changes: varchar(255), (256) and (512). */
export const CHANGE_COLUMN_SIZES = {
  author: 255,
  committer: 255,
  branch: 255,
  revision: 255,
  revlink: 256,
  category: 255,
  repository: 512,
  project: 512,
  codebase: 256,
} as const;

/** change_files.filename: varchar(1024). */
export const CHANGE_FILE_SIZE = 1024;
