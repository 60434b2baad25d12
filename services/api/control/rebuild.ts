// rebuild: a new build set with the original build set's source stamps and properties, for
// the builder of the build, as Buildbot's rebuildBuildrequest does (core/data rebuildBuild).
import { rebuildBuild } from '../../core/data/buildsets.js';
import { type DataContext, transact } from '../../core/data/transaction.js';

export async function rebuild(ctx: DataContext, buildid: number): Promise<[number, Record<string, number>]> {
  const added = await transact(ctx, (tx) => rebuildBuild(tx, buildid));
  return [added.bsid, added.brids];
}
