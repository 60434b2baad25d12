// Waterfall (`#/waterfall`, as Buildbot's): builders across as columns, time running down
// (newest at the top), each build a block from its start to its end at the scale the
// settings choose, idle stretches collapsed (../waterfall-layout.ts). Scrolling down reads
// older builds a page at a time; builds that start and finish arrive by their events.
//
// Kept smooth with many running builds (Buildbot's waterfall pins a CPU then, its #5432):
// an event replaces one build and re-renders what depends on it; a running block grows by
// its own timer, no faster than a pixel at the scale, and nothing else re-renders as time
// passes but once per axis margin (the top time moves when now reaches it).
import { Component } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { BuilderPager, useBuilderColumns } from '../components/builder-columns.js';
import { ErrorBox, Loading, pageOf } from '../components/common.js';
import { useWaterfallBuilds } from '../components/waterfall-builds.js';
import { duration, resultName, timestamp } from '../format.js';
import { useNow } from '../live.js';
import { href, type Route } from '../router.js';
import { usePageSize, useSettings } from '../settings.js';
import { useTitle } from '../title.js';
import type { Build } from '../types.js';
import {
  type Axis,
  axisMarks,
  COLLAPSED_PX,
  layoutAxis,
  type Placed,
  placeBlocks,
} from '../waterfall-layout.js';

const BUILDERS = 30;
const OWN_PAGE = 100;
/** A block is at least this tall, so that its number can be read and clicked. */
const MIN_BLOCK_PX = 16;
/** Builds of a builder that overlap stand side by side, at most this many. */
const MAX_LANES = 4;
/** Empty room above the newest build, in pixels: the top time moves once now has crossed it. */
const HEAD_PX = 60;

const short = (t: number) => timestamp(t).slice(5, 16);

/** Re-renders only when one of its props is another value (a build replaced, a layout changed). */
abstract class Pure<P extends object> extends Component<P> {
  override shouldComponentUpdate(next: P): boolean {
    return (Object.keys(next) as (keyof P)[]).some((k) => next[k] !== this.props[k]);
  }
}

interface BlockProps extends Placed {
  b: Build;
  name: string;
  /** For a running build only: where now is drawn, as it moves. */
  y?: (t: number) => number;
  tickMs: number;
}

function BlockLink({ b, name, top, height, lane, lanes }: BlockProps) {
  const result = resultName(b.results, b.complete);
  const took = b.complete_at ? `, took ${duration(b.complete_at - b.started_at)}` : '';
  return (
    <a
      class={`wf-block r-${result}`}
      href={href(`/builders/${b.builderid}/builds/${b.number}`)}
      aria-label={`${name} #${b.number}: ${result}`}
      title={`${name} #${b.number}: ${b.state_string}\nstarted ${timestamp(b.started_at)}${took}`}
      style={{
        top: `${top}px`,
        height: `${height}px`,
        left: `calc(${(100 * lane) / lanes}% + 1px)`,
        width: `calc(${100 / lanes}% - 2px)`,
      }}
    >
      {b.number}
    </a>
  );
}

/** A running build: its top edge is now, moved by its own timer. */
function RunningBlock(props: BlockProps & { y: (t: number) => number }) {
  const now = useNow(props.tickMs) / 1000;
  const top = Math.min(props.y(now), props.top + props.height - MIN_BLOCK_PX);
  return <BlockLink {...props} top={top} height={props.top + props.height - top} />;
}

class Block extends Pure<BlockProps> {
  override render() {
    const { y } = this.props;
    return y ? <RunningBlock {...this.props} y={y} /> : <BlockLink {...this.props} />;
  }
}

export function WaterfallPage({ route }: { route: Route }) {
  useTitle('Waterfall');
  const page = pageOf(route.query);
  const tag = route.query.get('tag') ?? '';
  const size = usePageSize(OWN_PAGE);
  const pxPerMinute = useSettings().waterfallScale;
  const builders = useBuilderColumns(tag, page, BUILDERS, ['builderid', 'name']);
  const shown = builders.data?.items ?? null;
  const data = useWaterfallBuilds(shown?.map((b) => b.builderid) ?? null, size);
  const headSeconds = (HEAD_PX * 60) / pxPerMinute;
  const [top, setTop] = useState(() => Date.now() / 1000 + headSeconds);
  useEffect(() => {
    const t = setTimeout(() => setTop(Date.now() / 1000 + headSeconds), Math.max(0, top * 1000 - Date.now()));
    return () => clearTimeout(t);
  }, [top, headSeconds]);
  // The same axis object while its segments stay the same (a build that finishes inside the
  // top segment, one that starts there): the blocks it places then do not re-render.
  const kept = useRef<{ key: string; axis: Axis } | null>(null);
  const axis = useMemo(() => {
    const next = layoutAxis(
      [...data.builds.values()].map((b) => ({ start: b.started_at, end: b.complete_at })),
      top,
      pxPerMinute,
    );
    const key = `${pxPerMinute}:${JSON.stringify(next.segments)}`;
    if (kept.current?.key !== key) kept.current = { key, axis: next };
    return kept.current.axis;
  }, [data.builds, top, pxPerMinute]);
  // A running block moves a pixel at most every this often (and at most once a second).
  const tickMs = Math.max(1000, 60_000 / pxPerMinute);
  const columns = useMemo(() => {
    const by = new Map<number, Build[]>((shown ?? []).map((b) => [b.builderid, []]));
    for (const b of data.builds.values()) by.get(b.builderid)?.push(b);
    const now = Date.now() / 1000;
    return new Map(
      [...by].map(([id, builds]) => {
        const placed = placeBlocks(
          builds.map((b) => ({
            id: b.buildid,
            top: axis.y(b.complete_at ?? now),
            bottom: axis.y(b.started_at),
          })),
          MIN_BLOCK_PX,
          MAX_LANES,
        );
        return [id, builds.map((b) => ({ b, at: placed.get(b.buildid)! }))];
      }),
    );
  }, [data.builds, shown, axis]);
  const end = useRef<HTMLDivElement>(null);
  // Older builds are read when the end of what is held comes into view (or is already).
  useEffect(() => {
    const el = end.current;
    if (!el || !data.ready) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) data.older();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [data.ready, data.builds, data.loading]);
  const height = Math.max(axis.height + MIN_BLOCK_PX, 120);
  return (
    <main id="main" tabIndex={-1}>
      <h1>Waterfall</h1>
      <p class="muted">
        Builders across, newest builds at the top; {pxPerMinute} px per minute (
        <a href="#/settings">settings</a>), idle times collapsed.
        {tag && (
          <span>
            {' '}
            Tag <strong>{tag}</strong> <a href={href('/waterfall')}>(any tag)</a>
          </span>
        )}
      </p>
      <ErrorBox error={builders.error} what="reading builders" />
      <ErrorBox error={data.error} what="reading builds" />
      <Loading when={!data.ready} />
      {shown && data.ready && (
        <>
          <div class="wf" data-testid="waterfall" style={{ '--cols': String(shown.length) }}>
            <div class="wf-head">
              <div class="wf-axis-head">Time (UTC)</div>
              {shown.map((b) => (
                <div class="wf-name" key={b.builderid}>
                  <a href={href(`/builders/${b.builderid}`)}>{b.name}</a>
                </div>
              ))}
            </div>
            <div class="wf-body" style={{ height: `${height}px` }}>
              <div class="wf-axis" aria-hidden="true">
                {axisMarks(axis).map((m) => (
                  <span class="wf-mark" key={m.t} style={{ top: `${m.y}px` }}>
                    {short(m.t)}
                  </span>
                ))}
              </div>
              {axis.segments
                .filter((s) => s.idleAbove > 0)
                .map((s) => (
                  <div
                    class="wf-idle muted small"
                    key={s.hi}
                    style={{ top: `${s.y - COLLAPSED_PX}px`, height: `${COLLAPSED_PX}px` }}
                  >
                    {duration(s.idleAbove)} without builds
                  </div>
                ))}
              {shown.map((builder) => (
                <div class="wf-col" key={builder.builderid}>
                  {(columns.get(builder.builderid) ?? []).map(({ b, at }) => (
                    <Block
                      key={b.buildid}
                      b={b}
                      name={builder.name}
                      {...at}
                      y={b.complete ? undefined : axis.y}
                      tickMs={tickMs}
                    />
                  ))}
                </div>
              ))}
            </div>
          </div>
          <div ref={end} class="wf-end muted" data-testid="waterfall-end">
            {data.loading ? 'Reading older builds…' : data.more ? 'Older builds below' : 'No older builds.'}
          </div>
          <BuilderPager
            path="/waterfall"
            tag={tag}
            page={page}
            size={BUILDERS}
            total={builders.data!.total}
          />
        </>
      )}
    </main>
  );
}
