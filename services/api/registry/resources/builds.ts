import { buildOfChange, buildTriggeredBy } from '../../../core/data/path-scopes.js';
import { sql } from '../../../core/db/pool.js';
import { build as buildEntity } from '../../../core/entities/build.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';
import { builderIdOf } from './builders.js';

export const build: Resource = entityResource(buildEntity, {
  counted: {
    table: 'builds',
    dims: ['builderid', 'workerid', 'complete'],
    scopes: [[], ['builderid'], ['complete'], ['builderid', 'complete'], ['workerid']],
  },
  // `complete` is complete_at IS NOT NULL, the column the notices' `complete` parts name.
  partFilter: { table: 'builds', field: 'complete' },
});

/** The build named in a path: by id, or by builder (id or name) and number. */
export function buildIdOf(args: PathArgs) {
  if (args.buildid !== undefined) return sql`${args.buildid}::int`;
  const number = args.build_number ?? args.number;
  return sql`(SELECT bb.id FROM builds bb WHERE bb.builderid = ${builderIdOf(args)} AND bb.number = ${number})`;
}

const one = (
  pattern: string,
  scope: Endpoint['scope'],
  parts?: Endpoint['parts'],
  rowParts?: Endpoint['rowParts'],
): Endpoint => ({
  pattern,
  resource: build,
  collection: false,
  kind: 'rows',
  scope,
  actions: ['stop', 'rebuild'],
  ...(parts ? { parts } : {}),
  ...(rowParts ? { rowParts } : {}),
});

/**
 * A build by builder and number, once read: its row, as by id (Endpoint.rowParts). A build
 * keeps its builder and number (builds_number is unique), so no other row can answer the
 * path while this one does. Without its id selected, the builder's part (or the table).
 */
export const buildByNumberParts: Endpoint['rowParts'] = (_a, value) => {
  const id = value('buildid');
  return typeof id === 'number' ? { builds: { id }, build_properties: { buildid: id } } : null;
};
const many = (
  pattern: string,
  scope: Endpoint['scope'],
  extra: Pick<Endpoint, 'rootLink' | 'countScope' | 'parts'> = {},
): Endpoint => ({ pattern, resource: build, collection: true, kind: 'rows', scope, ...extra });

export const buildEndpoints: Endpoint[] = [
  one(
    'builds/n:buildid',
    (a) => [sql`a.id = ${a.buildid}`],
    (a) => ({ builds: { id: a.buildid }, build_properties: { buildid: a.buildid } }),
  ),
  one(
    'builders/n:builderid/builds/n:number',
    (a) => [sql`a.builderid = ${a.builderid}`, sql`a.number = ${a.number}`],
    (a) => ({ builds: { builderid: a.builderid } }),
    buildByNumberParts,
  ),
  // The builder's name is read from builders, which stays whole.
  one(
    'builders/s:buildername/builds/n:number',
    (a) => [sql`a.builderid = ${builderIdOf(a)}`, sql`a.number = ${a.number}`],
    undefined,
    buildByNumberParts,
  ),
  many('builds', () => [], { rootLink: 'builds', countScope: () => ({}) }),
  many('builders/n:builderid/builds', (a) => [sql`a.builderid = ${a.builderid}`], {
    countScope: (a) => ({ builderid: sql`${String(a.builderid)}::text` }),
    parts: (a) => ({ builds: { builderid: a.builderid } }),
  }),
  many('builders/s:buildername/builds', (a) => [sql`a.builderid = ${builderIdOf(a)}`], {
    countScope: (a) => ({ builderid: sql`(${builderIdOf(a)})::text` }),
  }),
  many('buildrequests/n:buildrequestid/builds', (a) => [sql`a.buildrequestid = ${a.buildrequestid}`]),
  many('changes/n:changeid/builds', (a) => [buildOfChange(a.changeid)]),
  many('workers/n:workerid/builds', (a) => [sql`a.workerid = ${a.workerid}`], {
    countScope: (a) => ({ workerid: sql`${String(a.workerid)}::text` }),
  }),
  // Buildbot 4.3: the builds of the build sets a build triggered (their parent_buildid).
  many('builds/n:buildid/triggered_builds', (a) => [buildTriggeredBy(a.buildid)]),
];
