// Buildbot 4.3's codebases of a project, their commits and branches (data/codebases.py,
// data/codebase_commits.py, data/codebase_branches.py), their shapes in core/entities/; a
// master writes them (core/data/codebases.ts, codebase-commits.ts, codebase-branches.ts).
// The commit graph (`commits_common_parent`) is one object that SQL builds
// (../../../core/data/commit-range.ts), served as a `properties`-kind endpoint is: one JSON
// value, and not found when there is none.
import { commitRangeJson } from '../../../core/data/commit-range.js';
import { sql } from '../../../core/db/pool.js';
import { branch as branchEntity } from '../../../core/entities/branch.js';
import { codebase as codebaseEntity } from '../../../core/entities/codebase.js';
import { commit as commitEntity } from '../../../core/entities/commit.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';

const codebase: Resource = entityResource(codebaseEntity);
const commit: Resource = entityResource(commitEntity);
const branch: Resource = entityResource(branchEntity);

const range = (a: PathArgs) =>
  commitRangeJson(Number(a.codebaseid), Number(a.commitid1), Number(a.commitid2));

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

// Buildbot 4.3's commit_graph type: its fields are the parts of the one value the endpoint
// reads (so /application.spec lists them as 4.3 does), each as SQL over that value too.
const part = (name: string) => (a: PathArgs) => sql`${range(a)} -> ${name}`;
// Read over the codebase's row, which the path names (and must exist).
const commitGraph: Resource = {
  ...codebase,
  ...{ name: 'commit_graph', plural: 'commit_graphs', key: 'common' },
  fields: [
    field('common', t.integer, (a) => sql`(${part('common')(a)})::text::integer`),
    field('to1', t.list(t.integer), part('to1')),
    field('to2', t.list(t.integer), part('to2')),
  ],
};

export const commitEndpoints: Endpoint[] = [
  rows('commits/n:commitid', commit, false, (a) => [sql`a.id = ${a.commitid}`]),
  rows('codebases/n:codebaseid/commits_by_revision/s:revision', commit, false, (a) => [
    sql`a.codebaseid = ${a.codebaseid}`,
    sql`a.revision = ${a.revision}`,
  ]),
  rows('codebases/n:codebaseid/commits', commit, true, (a) => [sql`a.codebaseid = ${a.codebaseid}`]),
  {
    pattern: 'codebases/n:codebaseid/commit_range/n:commitid1/n:commitid2/commits_common_parent',
    resource: commitGraph,
    collection: false,
    kind: 'properties',
    // The range is read twice (here and as the value) so that "none" is a 404, not `{}`;
    // each read is at most 2 x 101 primary-key lookups.
    scope: (a) => [sql`a.id = ${a.codebaseid}`, sql`${range(a)} IS NOT NULL`],
    value: (a) => range(a),
  },
];

export const branchEndpoints: Endpoint[] = [
  rows('branches/n:branchid', branch, false, (a) => [sql`a.id = ${a.branchid}`]),
  rows('codebases/n:codebaseid/branches', branch, true, (a) => [sql`a.codebaseid = ${a.codebaseid}`]),
];
