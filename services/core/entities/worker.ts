// Workers, with the masters they are connected to and configured on. A read under a master
// or a builder (`masters/1/workers`) lists only that master's and builder's entries, as
// Buildbot's getWorkers does (connected_to follows the master only); an event lists all.
import { sql } from '../db/pool.js';
import { type Entity, type FieldArgs, field } from './field.js';
import { t } from './types.js';

const configuredOn = (
  a: FieldArgs,
) => sql`(SELECT coalesce(json_agg(json_build_object('builderid', bm.builderid,
      'masterid', bm.masterid) ORDER BY cw.id), '[]'::json)
    FROM configured_workers cw JOIN builder_masters bm ON bm.id = cw.buildermasterid
    WHERE cw.workerid = a.id
      AND (${a.masterid ?? null}::int IS NULL OR bm.masterid = ${a.masterid ?? null}::int)
      AND (${a.builderid ?? null}::int IS NULL OR bm.builderid = ${a.builderid ?? null}::int))`;

const connectedTo = (a: FieldArgs) => sql`(SELECT coalesce(json_agg(json_build_object('masterid', cn.masterid)
      ORDER BY cn.id), '[]'::json)
    FROM connected_workers cn WHERE cn.workerid = a.id
      AND (${a.masterid ?? null}::int IS NULL OR cn.masterid = ${a.masterid ?? null}::int))`;

const flag = (col: string) => sql`(${sql.ident('a', col)} <> 0)`;

export const worker: Entity = {
  name: 'worker',
  plural: 'workers',
  key: 'workerid',
  table: 'workers',
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
