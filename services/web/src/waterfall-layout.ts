// The waterfall's time axis: newest at the top, time running down, one linear scale (the
// setting's pixels per minute) over the times when some build ran, and each idle stretch
// longer than GAP_PX would be drawn at its scale collapsed to a fixed gap, as Buildbot's
// waterfall collapses its empty times: a night without builds would otherwise be metres of
// nothing between two days' builds.
//
// The axis is measured from its top time down, so older builds read by a later page only
// add segments below: nothing already on screen moves. A running build counts as running
// up to the top time (not to now), so the axis does not change as it runs; its block alone
// grows (pages/waterfall.tsx), and the axis is laid out again only when builds come or go
// or when now passes the top time.

/** Idle stretches taller than this at the scale are collapsed... */
export const GAP_PX = 48;
/** ...to this. */
export const COLLAPSED_PX = 28;

export interface Span {
  start: number;
  /** Epoch seconds; null while running. */
  end: number | null;
}

/** A stretch of the axis drawn at the scale: from `hi` (its top) down to `lo`, starting at `y`. */
export interface Segment {
  hi: number;
  lo: number;
  y: number;
  /** An idle stretch was collapsed just above it (its length in seconds). */
  idleAbove: number;
}

export interface Axis {
  segments: Segment[];
  height: number;
  /** Pixels per second. */
  scale: number;
  /** Where a time is drawn; a time in a collapsed stretch goes to the stretch's lower edge. */
  y: (t: number) => number;
}

export function layoutAxis(spans: readonly Span[], top: number, pxPerMinute: number): Axis {
  const scale = pxPerMinute / 60;
  // Busy ranges, newest first, merged where they overlap.
  const sorted = spans
    .map((s) => ({ hi: Math.min(top, s.end ?? top), lo: Math.min(top, s.start) }))
    .sort((a, b) => b.hi - a.hi);
  const ranges: { hi: number; lo: number }[] = [];
  for (const r of sorted) {
    const last = ranges.at(-1);
    if (last && r.hi >= last.lo) last.lo = Math.min(last.lo, r.lo);
    else ranges.push({ ...r });
  }
  const segments: Segment[] = [];
  let cursor = top;
  for (const r of ranges) {
    const idle = cursor - r.hi;
    const last = segments.at(-1);
    if (idle * scale <= GAP_PX) {
      if (last) last.lo = r.lo;
      else segments.push({ hi: top, lo: r.lo, y: 0, idleAbove: 0 });
    } else {
      const y = (last ? last.y + (last.hi - last.lo) * scale : 0) + COLLAPSED_PX;
      segments.push({ hi: r.hi, lo: r.lo, y, idleAbove: idle });
    }
    cursor = r.lo;
  }
  const end = segments.at(-1);
  const height = end ? end.y + (end.hi - end.lo) * scale : 0;
  const y = (t: number): number => {
    for (const s of segments) {
      if (t > s.hi) return s.y;
      if (t >= s.lo) return s.y + (s.hi - t) * scale;
    }
    return height;
  };
  return { segments, height, scale, y };
}

/** Times to label beside the axis: each segment's top, then one about every `every` px. */
export function axisMarks(axis: Axis, every = 120): { t: number; y: number }[] {
  const marks: { t: number; y: number }[] = [];
  for (const s of axis.segments) {
    const step = every / axis.scale;
    for (let t = s.hi; t >= s.lo; t -= step) marks.push({ t, y: s.y + (s.hi - t) * axis.scale });
  }
  return marks;
}

export interface Placed {
  top: number;
  height: number;
  /** Side by side: this block's lane among `lanes`. */
  lane: number;
  lanes: number;
}

/**
 * Places a column's blocks: builds of one builder that overlap on screen (they ran at once on
 * several workers, or each is shorter than the smallest block) stand side by side in lanes,
 * at most `maxLanes`; a group of blocks that overlap one another shares its lane count, so
 * one busy hour does not narrow the column's every block.
 */
export function placeBlocks(
  blocks: readonly { id: number; top: number; bottom: number }[],
  minPx: number,
  maxLanes: number,
): Map<number, Placed> {
  const out = new Map<number, Placed>();
  const sorted = [...blocks].sort((a, b) => a.top - b.top || a.id - b.id);
  let group: Placed[] = [];
  let lanes: number[] = [];
  let groupEnd = Number.NEGATIVE_INFINITY;
  const close = () => {
    for (const p of group) p.lanes = lanes.length;
    group = [];
    lanes = [];
  };
  for (const b of sorted) {
    const height = Math.max(minPx, b.bottom - b.top);
    if (b.top >= groupEnd) close();
    let lane = lanes.findIndex((end) => end <= b.top);
    if (lane < 0 && lanes.length < maxLanes) lane = lanes.push(b.top) - 1;
    if (lane < 0) lane = lanes.indexOf(Math.min(...lanes));
    lanes[lane] = b.top + height;
    groupEnd = Math.max(groupEnd, b.top + height);
    const p: Placed = { top: b.top, height, lane, lanes: 0 };
    group.push(p);
    out.set(b.id, p);
  }
  close();
  return out;
}
