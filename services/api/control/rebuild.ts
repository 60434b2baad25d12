// rebuild: a new build set with the original build set's source stamps and properties, for
// the builder of the build, as Buildbot's rebuildBuildrequest does.

import { addBuildset } from '../../core/data/buildsets.js';
import { type DataContext, transact } from '../../core/data/transaction.js';
import { sql } from '../../core/db/pool.js';
import type { ActionCall } from '../http/jsonrpc.js';

export async function rebuild(ctx: DataContext, call: ActionCall): Promise<[number, Record<string, number>]> {
  const { endpoint, args } = call.match;
  return transact(ctx, async (tx) => {
    const [b] = await tx.q.query(sql`
      SELECT br.builderid, bs.id AS bsid, bs.external_idstring, bs.parent_buildid, bs.parent_relationship
      FROM builds a JOIN buildrequests br ON br.id = a.buildrequestid JOIN buildsets bs ON bs.id = br.buildsetid
      WHERE ${sql.join(endpoint.scope(args), sql` AND `)}`);
    const ss = await tx.q.query(
      sql`SELECT sourcestampid FROM buildset_sourcestamps WHERE buildsetid = ${b.bsid} ORDER BY id`,
    );
    const props = await tx.q.query(sql`
      SELECT property_name, flotilla.try_json(property_value) AS pair FROM buildset_properties WHERE buildsetid = ${b.bsid}`);
    const properties: Record<string, [unknown, string]> = {};
    for (const p of props)
      if (Array.isArray(p.pair) && p.pair.length === 2)
        properties[p.property_name] = p.pair as [unknown, string];
    const added = await addBuildset(tx, {
      scheduler: 'rebuild',
      sourcestamps: ss.map((r) => r.sourcestampid as number),
      reason: 'rebuild',
      properties,
      builderids: [b.builderid],
      external_idstring: b.external_idstring,
      parent_buildid: b.parent_buildid,
      parent_relationship: b.parent_relationship,
    });
    return [added.bsid, added.brids];
  });
}
