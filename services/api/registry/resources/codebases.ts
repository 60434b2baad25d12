// Buildbot 4.3's codebases of a project, their commits and branches (data/codebases.py,
// data/codebase_commits.py, data/codebase_branches.py): read only here; Buildbot's own
// masters write them. The commit graph (`commits_common_parent`) is not served.
import { sql } from '../../../core/db/pool.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, Resource } from '../model.js';

const codebase: Resource = {
  name: 'codebase',
  plural: 'codebases',
  key: 'codebaseid',
  from: sql`codebases a`,
  fields: [
    field('codebaseid', t.integer, sql`a.id`),
    field('projectid', t.integer, sql`a.projectid`),
    field('name', t.identifier(70), sql`a.name`),
    field('slug', t.identifier(70), sql`a.slug`),
  ],
};

const commit: Resource = {
  name: 'commit',
  plural: 'commits',
  key: 'commitid',
  from: sql`codebase_commits a`,
  fields: [
    field('commitid', t.integer, sql`a.id`),
    field('codebaseid', t.integer, sql`a.codebaseid`),
    field('author', t.string, sql`a.author`),
    field('committer', t.string, sql`a.committer`, { nullable: true }),
    field('comments', t.string, sql`a.comments`),
    field('when_timestamp', t.integer, sql`a.when_timestamp`),
    field('revision', t.string, sql`a.revision`),
    field('parent_commitid', t.integer, sql`a.parent_commitid`, { nullable: true }),
  ],
};

// Buildbot declares commitid an Integer though the column may be NULL (a branch whose commit
// was deleted): the spec says integer, the value may be null.
const branch: Resource = {
  name: 'branch',
  plural: 'branches',
  key: 'branchid',
  from: sql`codebase_branches a`,
  fields: [
    field('branchid', t.integer, sql`a.id`),
    field('codebaseid', t.integer, sql`a.codebaseid`),
    field('name', t.string, sql`a.name`),
    field('commitid', t.integer, sql`a.commitid`, { nullableSql: true }),
    field('last_timestamp', t.integer, sql`a.last_timestamp`),
  ],
};

const rows = (
  pattern: string,
  resource: Resource,
  collection: boolean,
  scope: Endpoint['scope'],
  rootLink?: string,
): Endpoint => ({ pattern, resource, collection, kind: 'rows', scope, ...(rootLink ? { rootLink } : {}) });

export const codebaseEndpoints: Endpoint[] = [
  rows('codebases/n:codebaseid', codebase, false, (a) => [sql`a.id = ${a.codebaseid}`]),
  rows('projects/n:projectid/codebases/i:codebasename', codebase, false, (a) => [
    sql`a.projectid = ${a.projectid}`,
    sql`a.name = ${a.codebasename}`,
  ]),
  rows('codebases', codebase, true, () => [], 'codebases'),
];

export const commitEndpoints: Endpoint[] = [
  rows('commits/n:commitid', commit, false, (a) => [sql`a.id = ${a.commitid}`]),
  rows('codebases/n:codebaseid/commits_by_revision/s:revision', commit, false, (a) => [
    sql`a.codebaseid = ${a.codebaseid}`,
    sql`a.revision = ${a.revision}`,
  ]),
  rows('codebases/n:codebaseid/commits', commit, true, (a) => [sql`a.codebaseid = ${a.codebaseid}`]),
];

export const branchEndpoints: Endpoint[] = [
  rows('branches/n:branchid', branch, false, (a) => [sql`a.id = ${a.branchid}`]),
  rows('codebases/n:codebaseid/branches', branch, true, (a) => [sql`a.codebaseid = ${a.codebaseid}`]),
];
