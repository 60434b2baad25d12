// force: start builds from a force scheduler's form. The builders asked for must be the
// scheduler's own and every parameter must be a field of its form; then the parameters are
// checked against the form. Every refusal comes back as JSON-RPC -32602 with a message per
// parameter, as Buildbot answers a form's errors. Then one build set is added with a request
// per builder (a builder that has no row yet gets one).

import { builderName, findBuilderIds } from '../../core/data/builders.js';
import { addBuildset } from '../../core/data/buildsets.js';
import { type DataContext, transact } from '../../core/data/transaction.js';
import { forcedBuilders } from '../../core/force/builder-names.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import { checkForce, unknownParameters } from '../../core/force/validate.js';
import { invalidParams, notFound } from '../errors/catalogue.js';
import type { ActionCall } from './action.js';

export async function force(
  ctx: DataContext,
  schedulers: ReadonlyMap<string, ForceScheduler>,
  call: ActionCall,
): Promise<[number, Record<string, number>]> {
  const sched = schedulers.get(String(call.match.args.schedulername));
  if (!sched) throw notFound();
  const { builderNames: _n, builderid: _i, owner: _o, ...formParams } = call.params;
  const builders = await forcedBuilders(sched, call.params, (id) => builderName(ctx.db, id));
  const checked = checkForce(sched, formParams, call.owner === 'anonymous' ? null : call.owner);
  // Every refusal at once, as Buildbot collects a form's errors.
  const refused = { ...unknownParameters(sched, call.params), ...(checked.ok ? {} : checked.errors) };
  if (!builders.ok) refused[builders.param] = builders.message;
  if (!builders.ok || !checked.ok || Object.keys(refused).length) throw invalidParams(refused);
  const { build } = checked;
  const names = builders.names;
  return transact(ctx, async (tx) => {
    const added = await addBuildset(tx, {
      scheduler: sched.name,
      sourcestamps: build.sourcestamps,
      reason: build.reason,
      properties: build.properties,
      // A builder no master has started yet gets its row now, as Buildbot's schedulers find
      // (and create) a builder's id by name: its request waits for a master that runs it.
      // Looking the rows up only dropped such builders, and a force of only them left an
      // empty build set, complete at once (found by load/workers/run.ts forcing at start).
      builderids: await findBuilderIds(tx, names),
    });
    return [added.bsid, added.brids];
  });
}
