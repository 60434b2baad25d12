import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';

// configured_on and connected_to list only the entries of the builder and master named in
// the path, as Buildbot's getWorkers does (connected_to follows the master only).
const configuredOn = (
  a: PathArgs,
) => sql`(SELECT coalesce(json_agg(json_build_object('builderid', bm.builderid,
      'masterid', bm.masterid) ORDER BY cw.id), '[]'::json)
    FROM configured_workers cw JOIN builder_masters bm ON bm.id = cw.buildermasterid
    WHERE cw.workerid = a.id
      AND (${a.masterid ?? null}::int IS NULL OR bm.masterid = ${a.masterid ?? null}::int)
      AND (${a.builderid ?? null}::int IS NULL OR bm.builderid = ${a.builderid ?? null}::int))`;

const connectedTo = (a: PathArgs) => sql`(SELECT coalesce(json_agg(json_build_object('masterid', cn.masterid)
      ORDER BY cn.id), '[]'::json)
    FROM connected_workers cn WHERE cn.workerid = a.id
      AND (${a.masterid ?? null}::int IS NULL OR cn.masterid = ${a.masterid ?? null}::int))`;

const configuredHere = (a: PathArgs) => sql`EXISTS (SELECT 1 FROM configured_workers cw
    JOIN builder_masters bm ON bm.id = cw.buildermasterid
    WHERE cw.workerid = a.id
      AND (${a.masterid ?? null}::int IS NULL OR bm.masterid = ${a.masterid ?? null}::int)
      AND (${a.builderid ?? null}::int IS NULL OR bm.builderid = ${a.builderid ?? null}::int))`;

const flag = (col: string) => sql`(${sql.ident('a', col)} <> 0)`;

export const worker: Resource = {
  name: 'worker',
  plural: 'workers',
  key: 'workerid',
  from: sql`workers a`,
  fields: [
    field('workerid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field(
      'connected_to',
      t.list(t.entity('master_id', [{ name: 'masterid', type: t.integer }])),
      connectedTo,
    ),
    field(
      'configured_on',
      t.list(
        t.entity('master_builder', [
          { name: 'masterid', type: t.integer },
          { name: 'builderid', type: t.integer },
        ]),
      ),
      configuredOn,
    ),
    field('workerinfo', t.jsonobject, sql`coalesce(flotilla.try_json(a.info), '{}'::json)`),
    field('paused', t.boolean, flag('paused'), { equals: (_a, v) => sql`a.paused = ${v ? 1 : 0}` }),
    field('graceful', t.boolean, flag('graceful'), { equals: (_a, v) => sql`a.graceful = ${v ? 1 : 0}` }),
  ],
};

const scoped = (a: PathArgs) =>
  a.masterid !== undefined || a.builderid !== undefined ? [configuredHere(a)] : [];
const byId = (a: PathArgs) => [sql`a.id = ${a.workerid}`, ...scoped(a)];
const byName = (a: PathArgs) => [sql`a.name = ${a.name}`, ...scoped(a)];
const one = (pattern: string, scope: Endpoint['scope']): Endpoint => ({
  pattern,
  resource: worker,
  collection: false,
  kind: 'rows',
  scope,
  actions: ['stop', 'pause', 'unpause', 'kill'],
});
const many = (pattern: string, rootLink?: string): Endpoint => ({
  pattern,
  resource: worker,
  collection: true,
  kind: 'rows',
  scope: scoped,
  ...(rootLink ? { rootLink } : {}),
});

export const workerEndpoints: Endpoint[] = [
  one('workers/n:workerid', byId),
  one('workers/i:name', byName),
  one('masters/n:masterid/workers/n:workerid', byId),
  one('masters/n:masterid/workers/i:name', byName),
  one('masters/n:masterid/builders/n:builderid/workers/n:workerid', byId),
  one('masters/n:masterid/builders/n:builderid/workers/i:name', byName),
  one('builders/n:builderid/workers/n:workerid', byId),
  one('builders/n:builderid/workers/i:name', byName),
  many('workers', 'workers'),
  many('masters/n:masterid/workers'),
  many('masters/n:masterid/builders/n:builderid/workers'),
  many('builders/n:builderid/workers'),
];
