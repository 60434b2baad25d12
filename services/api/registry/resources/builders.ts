import { builderOfWorker } from '../../../core/data/path-scopes.js';
import { sql } from '../../../core/db/pool.js';
import { builder as builderEntity } from '../../../core/entities/builder.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';

export const builder: Resource = entityResource(builderEntity);

const onMaster = (args: PathArgs) =>
  sql`EXISTS (SELECT 1 FROM builder_masters bm WHERE bm.builderid = a.id AND bm.masterid = ${args.masterid})`;

// Buildbot 4.3: the builders of a project, and those a worker is configured for (on any master).
const ofProject = (args: PathArgs) => sql`a.projectid = ${args.projectid}`;
const ofWorker = (args: PathArgs) => builderOfWorker(args.workerid);

/** The builder named in a path, by id or by name (for other resources' scopes). */
export function builderIdOf(args: PathArgs) {
  return args.builderid !== undefined
    ? sql`${args.builderid}::int`
    : sql`(SELECT bn.id FROM builders bn WHERE bn.name = ${args.buildername})`;
}

export const builderEndpoints: Endpoint[] = [
  {
    pattern: 'builders/n:builderid',
    resource: builder,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.builderid}`],
  },
  {
    pattern: 'builders/s:buildername',
    resource: builder,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.name = ${a.buildername}`],
  },
  {
    pattern: 'masters/n:masterid/builders/n:builderid',
    resource: builder,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.builderid}`, onMaster(a)],
  },
  {
    pattern: 'builders',
    resource: builder,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'builders',
  },
  {
    pattern: 'masters/n:masterid/builders',
    resource: builder,
    collection: true,
    kind: 'rows',
    scope: (a) => [onMaster(a)],
  },
  {
    pattern: 'projects/n:projectid/builders',
    resource: builder,
    collection: true,
    kind: 'rows',
    scope: (a) => [ofProject(a)],
  },
  {
    pattern: 'workers/n:workerid/builders',
    resource: builder,
    collection: true,
    kind: 'rows',
    scope: (a) => [ofWorker(a)],
  },
];
