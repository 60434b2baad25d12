import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';

export const builder: Resource = {
  name: 'builder',
  plural: 'builders',
  key: 'builderid',
  from: sql`builders a`,
  fields: [
    field('builderid', t.integer, sql`a.id`),
    field('name', t.identifier(70), sql`a.name`),
    field(
      'masterids',
      t.list(t.integer),
      sql`ARRAY(SELECT bm.masterid FROM builder_masters bm WHERE bm.builderid = a.id ORDER BY bm.masterid)`,
    ),
    field('description', t.string, sql`a.description`, { nullable: true }),
    field(
      'tags',
      t.list(t.string),
      sql`ARRAY(SELECT tg.name FROM builders_tags bt JOIN tags tg ON tg.id = bt.tagid
                WHERE bt.builderid = a.id ORDER BY bt.id)`,
    ),
  ],
};

const onMaster = (args: PathArgs) =>
  sql`EXISTS (SELECT 1 FROM builder_masters bm WHERE bm.builderid = a.id AND bm.masterid = ${args.masterid})`;

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
    pattern: 'builders/i:buildername',
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
];
