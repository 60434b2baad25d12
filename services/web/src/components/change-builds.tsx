// The latest changes and the builds each caused, for the dashboards that set builders
// against changes (the grid: builders down; the console: changes down) and for the changes
// list. One paged read of the changes, then one read of the builds of all the changes on
// screen (few fields), the API's `/change_builds` (Flotilla's): a read per change made the
// grid 20 requests, the console 22 and the changes page 26 (load/results/web-pages.md).
// Read again when a change arrives or a build of a builder on screen starts or ends (others'
// builds cannot change a cell shown; with 20 builds running, reading every change's builds
// again on each of their events made 126 reads in 10 s: load/results/web-pages.md).
import { getPage } from '../api.js';
import { type Live, useLive } from '../live.js';
import type { Build, Change } from '../types.js';
import { BuildBox } from './common.js';

export type CellBuild = Pick<Build, 'buildid' | 'number' | 'builderid' | 'results' | 'complete'>;

const CELL_FIELDS = ['changeid', 'buildid', 'number', 'builderid', 'results', 'complete'];

/**
 * The builds of each of `changeids` (in that order), newest first, in one read. The page
 * holds `perChange` builds per change on average: a change that caused more (a push to every
 * builder of a large installation) may leave the oldest changes of the page fewer.
 */
export async function buildsOfChanges(
  changeids: readonly number[],
  perChange: number,
  signal: AbortSignal,
): Promise<CellBuild[][]> {
  if (changeids.length === 0) return [];
  const page = await getPage<CellBuild & { changeid: number }>(
    'change_builds',
    'builds',
    {
      changeid__in: [...changeids],
      order: ['-changeid', '-buildid'],
      limit: changeids.length * perChange,
      field: CELL_FIELDS,
    },
    signal,
  );
  const byChange = new Map<number, CellBuild[]>(changeids.map((id) => [id, []]));
  for (const { changeid, ...b } of page.items) byChange.get(changeid)?.push(b);
  return changeids.map((id) => byChange.get(id)!.slice(0, perChange));
}

/** Whether a build event can change what `lists` shows: a start, or the end of one shown. */
export function showsBuildEvent(lists: readonly (readonly CellBuild[])[] | undefined, m: unknown): boolean {
  const b = m as Partial<CellBuild> | null;
  return !b?.complete || !!lists?.some((list) => list.some((x) => x.buildid === b.buildid));
}

/**
 * The builds of each of `changeids`, live, by change (so that a list whose changes were read
 * again never shows a change another's builds): read again when a build starts or one shown ends.
 */
export function useBuildsOfChanges(
  changeids: readonly number[],
  perChange: number,
): Live<ReadonlyMap<number, CellBuild[]>> {
  const live: Live<ReadonlyMap<number, CellBuild[]>> = useLive(
    async (s) => {
      const lists = await buildsOfChanges(changeids, perChange, s);
      return new Map(changeids.map((id, i) => [id, lists[i]!]));
    },
    [changeids.join(','), perChange],
    ['builds/*/new', 'builds/*/finished'],
    // Builds start and end in bursts (a push starts many at once): one read for a burst.
    2000,
    (m) => showsBuildEvent(live.data && [...live.data.values()], m),
  );
  return live;
}

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
      const builds = await buildsOfChanges(
        page.items.map((c) => c.changeid),
        BUILDS_PER_CHANGE,
        s,
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
      return showsBuildEvent(live.data?.builds, b);
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
