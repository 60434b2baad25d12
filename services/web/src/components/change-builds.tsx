// The latest changes and the builds each caused, for the dashboards that set builders
// against changes (the grid: builders down; the console: changes down). One paged read of
// the changes, then one read per change on screen of its builds (few fields), all at once;
// read again when a change arrives or a build of a builder on screen starts or ends (others'
// builds cannot change a cell shown; with 20 builds running, reading every change's builds
// again on each of their events made 126 reads in 10 s: load/results/web-pages.md).
import { getPage } from '../api.js';
import { type Live, useLive } from '../live.js';
import type { Build, Change } from '../types.js';
import { BuildBox } from './common.js';

export type CellBuild = Pick<Build, 'buildid' | 'number' | 'builderid' | 'results' | 'complete'>;

export interface ChangeBuilds {
  changes: Change[];
  /** The builds of changes[i], any builder, newest first. */
  builds: CellBuild[][];
  /** How many changes there are in all (for the pager). */
  total: number;
}

/** A change's builds read at most: more than any dashboard cell shows. */
const BUILDS_PER_CHANGE = 50;

/** `builderids`: the builders on screen (null while they are read: every build event counts). */
export function useChangeBuilds(
  limit: number,
  offset: number,
  builderids: readonly number[] | null,
): Live<ChangeBuilds> {
  const shown = builderids ? new Set(builderids) : null;
  const live: Live<ChangeBuilds> = useLive(
    async (s) => {
      const page = await getPage<Change>('changes', 'changes', { order: '-changeid', limit, offset }, s);
      const builds = await Promise.all(
        page.items.map((c) =>
          getPage<CellBuild>(
            `changes/${c.changeid}/builds`,
            'builds',
            {
              order: '-buildid',
              limit: BUILDS_PER_CHANGE,
              field: ['buildid', 'number', 'builderid', 'results', 'complete'],
            },
            s,
          ).then((p) => p.items),
        ),
      );
      return { changes: page.items, builds, total: page.total };
    },
    [limit, offset],
    ['changes/*/*', 'builds/*/new', 'builds/*/finished'],
    // Builds start and end in bursts (a push starts many at once): one read for a burst.
    2000,
    (m) => {
      const b = m as Partial<CellBuild> | null;
      if (typeof b?.builderid !== 'number') return true; // a change
      if (shown && !shown.has(b.builderid)) return false;
      // A build that ends changes a cell only if the cell holds it.
      return !b.complete || !!live.data?.builds.some((list) => list.some((x) => x.buildid === b.buildid));
    },
  );
  return live;
}

/** One cell: the builds of a change (its list) that ran on one builder. */
export function CellBuilds({ list, builderid }: { list: readonly CellBuild[]; builderid: number }) {
  return (
    <>
      {list
        .filter((x) => x.builderid === builderid)
        .map((x) => (
          <BuildBox
            key={x.buildid}
            builderid={x.builderid}
            number={x.number}
            results={x.results}
            complete={x.complete}
          />
        ))}
    </>
  );
}
