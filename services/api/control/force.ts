// force: start builds from a force scheduler's form. The parameters are checked against the
// form (errors come back as JSON-RPC -32602 with a message per field), then one build set
// is added with a request per builder.

import { addBuildset } from '../../core/data/buildsets.js';
import { type DataContext, transact } from '../../core/data/transaction.js';
import { sql } from '../../core/db/pool.js';
import { forcedBuilderNames } from '../../core/force/builder-names.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import { checkForce } from '../../core/force/validate.js';
import { invalidCall, invalidParams, notFound } from '../errors/catalogue.js';
import type { ActionCall } from '../http/jsonrpc.js';

export async function force(
  ctx: DataContext,
  schedulers: ReadonlyMap<string, ForceScheduler>,
  call: ActionCall,
): Promise<[number, Record<string, number>]> {
  const sched = schedulers.get(String(call.match.args.schedulername));
  if (!sched) throw notFound();
  const { builderNames: _n, builderid: _i, owner: _o, ...formParams } = call.params;
  const names = await forcedBuilderNames(sched, call.params, async (id) => {
    const [row] = await ctx.db.query(sql`SELECT name FROM builders WHERE id = ${id}`);
    return row ? (row.name as string) : null;
  });
  if (names === null) throw invalidCall(`no builder with id ${JSON.stringify(call.params.builderid)}`);
  if (names.length === 0) throw invalidCall('builderNames not specified or not supported by this scheduler');
  const checked = checkForce(sched, formParams, call.owner === 'anonymous' ? null : call.owner);
  if (!checked.ok) throw invalidParams(checked.errors);
  const { build } = checked;
  return transact(ctx, async (tx) => {
    const ids = await tx.q.query(sql`SELECT id FROM builders WHERE name = ANY(${names}::text[]) ORDER BY id`);
    const added = await addBuildset(tx, {
      scheduler: sched.name,
      sourcestamps: build.sourcestamps,
      reason: build.reason,
      properties: build.properties,
      builderids: ids.map((r) => r.id as number),
    });
    return [added.bsid, added.brids];
  });
}
