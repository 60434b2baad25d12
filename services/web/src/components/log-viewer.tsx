// A log of any length, smooth: only the lines on screen are in the page (a few dozen
// elements, whatever the log's size), placed over a spacer as tall as the whole log. Past
// MAX_SPACE_PX (browsers cap an element's height; Firefox near 17.9 million px) the spacer
// is scaled and scroll positions map to lines proportionally, so a 1,000,000-line log
// (18 million px of lines) scrolls from its first line to its last.
//
// Keyboard: the log area takes focus; arrows move a line, Page Up/Down a screen, Home and
// End go to the start and the end (End also follows a running log). Each line number is a
// link to that line.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type AnsiState, parseAnsi } from '../ansi.js';
import { type LogModel, streamOf } from '../log-model.js';

export const LINE_PX = 18;
const MAX_SPACE_PX = 15_000_000;
const OVERSCAN = 8;

function Line({
  n,
  text,
  stdio,
  start,
  selected,
  link,
}: {
  n: number;
  text: string | null;
  stdio: boolean;
  /** The colours the lines above left open. */
  start: AnsiState;
  selected: boolean;
  link: string;
}) {
  const [kind, body] = text === null ? ['', null] : streamOf(text, stdio);
  return (
    <div class={`ln${kind ? ` l-${kind}` : ''}${selected ? ' sel' : ''}`} data-line={n}>
      <a class="no" href={link} tabIndex={-1}>
        {n}
      </a>
      <span class="tx">
        {body === null ? (
          <span class="muted">…</span>
        ) : (
          parseAnsi(body, start).map((s, i) =>
            s.cls || s.color || s.background ? (
              <span
                key={i}
                class={s.cls || undefined}
                style={
                  s.color || s.background ? { color: s.color, backgroundColor: s.background } : undefined
                }
              >
                {s.text}
              </span>
            ) : (
              s.text
            ),
          )
        )}
      </span>
    </div>
  );
}

export function LogViewer({
  model,
  stdio,
  selected,
  lineLink,
  follow,
  setFollow,
  label,
}: {
  model: LogModel;
  stdio: boolean;
  /** 1-based line to show and mark, from the link. */
  selected: number | null;
  lineLink: (n: number) => string;
  follow: boolean;
  setFollow: (f: boolean) => void;
  label: string;
}) {
  const scroller = useRef<HTMLElement>(null);
  const [, setVersion] = useState(0);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const frame = useRef(0);
  const n = model.numLines;
  const total = n * LINE_PX;
  const space = Math.min(total, MAX_SPACE_PX);
  // scrollTop in [0, space - height] covers virtual pixels [0, total - height].
  const scale = total > space ? (space - height) / Math.max(1, total - height) : 1;
  const virtualTop = scrollTop / scale;
  const first = Math.max(0, Math.floor(virtualTop / LINE_PX));
  const count = Math.ceil(height / LINE_PX) + 1;
  const from = Math.max(0, first - OVERSCAN);
  const to = Math.min(n, first + count + OVERSCAN);
  // Where line `from` sits in the spacer: the rendered block moves with the real scroll.
  const blockTop = scrollTop - (virtualTop - from * LINE_PX);

  useEffect(() => {
    model.onChange = () => setVersion(model.version);
    return () => {
      model.onChange = () => {};
    };
  }, [model]);

  useEffect(() => {
    model.want(from, to);
  });

  useLayoutEffect(() => {
    const el = scroller.current!;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    ro.observe(el);
    setHeight(el.clientHeight || 600);
    return () => ro.disconnect();
  }, []);

  const scrollToLine = (line: number, where: 'top' | 'end') => {
    const el = scroller.current!;
    const virtual = where === 'end' ? total : Math.max(0, line * LINE_PX - height / 3);
    el.scrollTop = Math.min(space, virtual * scale);
    setScrollTop(el.scrollTop);
  };

  // A linked line: shown once it exists.
  const shown = useRef<number | null>(null);
  useLayoutEffect(() => {
    if (selected !== null && selected !== shown.current && selected <= n) {
      shown.current = selected;
      setFollow(false);
      scrollToLine(selected - 1, 'top');
    }
  }, [selected, n]);

  // Following: the end stays in view as lines arrive.
  useLayoutEffect(() => {
    if (follow) scrollToLine(n, 'end');
  }, [follow, n, height]);

  const onScroll = () => {
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      const el = scroller.current;
      if (!el) return;
      setScrollTop(el.scrollTop);
      const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - 2;
      if (follow && !atEnd) setFollow(false);
    });
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const el = scroller.current!;
    const step = LINE_PX * scale;
    const moves: Record<string, () => void> = {
      ArrowDown: () => (el.scrollTop += step),
      ArrowUp: () => (el.scrollTop -= step),
      PageDown: () => (el.scrollTop += Math.max(step, (height - LINE_PX) * scale)),
      PageUp: () => (el.scrollTop -= Math.max(step, (height - LINE_PX) * scale)),
      ' ': () => (el.scrollTop += Math.max(step, (height - LINE_PX) * scale)),
      Home: () => {
        setFollow(false);
        el.scrollTop = 0;
      },
      End: () => {
        scrollToLine(n, 'end');
        setFollow(true);
      },
    };
    const move = moves[e.key];
    if (!move || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    if (e.key !== 'End' && e.key !== 'Home') setFollow(false);
    move();
  };

  const rows = [];
  for (let i = from; i < to; i++) {
    rows.push(
      <Line
        key={i}
        n={i + 1}
        text={model.line(i)}
        stdio={stdio}
        start={model.startState(i)}
        selected={selected === i + 1}
        link={lineLink(i + 1)}
      />,
    );
  }
  return (
    <section
      ref={scroller}
      class="log-scroll"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region must take focus to be moved by keyboard (WCAG 2.1.1)
      tabIndex={0}
      aria-label={label}
      onScroll={onScroll}
      onKeyDown={onKeyDown}
      data-first-line={first + 1}
      data-lines={n}
    >
      <div class="log-space" style={{ height: `${Math.max(space, 1)}px` }}>
        <div class="log-rows" style={{ transform: `translateY(${blockTop}px)` }}>
          {rows}
        </div>
      </div>
    </section>
  );
}
