// A build with its builder's previous and next build, in one read (issue 34 §3: the build
// page made 17 requests, three of them the build and one neighbour each). Buildbot numbers a
// builder's builds one after another (the highest number plus one), and neither it nor
// Flotilla deletes a build but the oldest ones by retention, so the three builds from number
// n - 1 on are the previous build, this one and the next. Where retention left a hole just
// before n, the previous build is read on its own; the next build is always the first after
// n of those three.
import { ApiError, getPage } from '../api.js';
import type { Build } from '../types.js';

export interface BuildWithNeighbours {
  build: Build;
  prev: number | null;
  next: number | null;
}

export async function readBuildWithNeighbours(
  builderid: number | string,
  number: number,
  signal: AbortSignal,
): Promise<BuildWithNeighbours> {
  const path = `builders/${builderid}/builds`;
  // Every property rides on the build (the properties table, the responsible users, the
  // builder's and worker's names): none of them costs a request of its own.
  const page = await getPage<Build>(
    path,
    'builds',
    { number__ge: number - 1, order: 'number', limit: 3, property: '*' },
    signal,
  );
  const build = page.items.find((b) => b.number === number);
  if (!build) throw new ApiError(404, 'not found');
  let prev = page.items.find((b) => b.number < number)?.number ?? null;
  if (prev === null && number > 1) {
    const before = await getPage<Pick<Build, 'number'>>(
      path,
      'builds',
      { number__lt: number, order: '-number', limit: 1, field: 'number' },
      signal,
    );
    prev = before.items[0]?.number ?? null;
  }
  return { build, prev, next: page.items.find((b) => b.number > number)?.number ?? null };
}
