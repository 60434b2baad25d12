// The person's preferences (`#/settings`): kept in this browser's localStorage, as
// Buildbot's UI keeps its settings, read by every page and applied at once (the app
// re-renders on a change, also one made in another tab: the `storage` event).
import { ago, timestamp } from './format.js';
import { useFollow } from './subscribers.js';

export interface Settings {
  /** Times as "5m ago" or as "2026-11-28 12:00:00 UTC". */
  time: 'relative' | 'absolute';
  /** Rows of a paged list; null leaves each page its own size. */
  pageSize: number | null;
  theme: 'light' | 'dark';
  /** The waterfall's scale: pixels per minute of the time axis. */
  waterfallScale: number;
}

export const PAGE_SIZES = [10, 25, 50, 100, 200];
/** Pixels per minute: from a day on a screen (1) to a 10-second build 50 px tall (300). */
export const WATERFALL_SCALES = [1, 5, 20, 60, 300];
const KEY = 'flotilla.settings';
const DEFAULTS: Settings = { time: 'relative', pageSize: null, theme: 'light', waterfallScale: 20 };

/** What is stored, checked field by field: an old or hand-edited value falls back to the default. */
function read(): Settings {
  let raw: Record<string, unknown> = {};
  try {
    raw = JSON.parse(localStorage.getItem(KEY) ?? '{}') ?? {};
  } catch {
    // unreadable: the defaults
  }
  return {
    time: raw.time === 'absolute' ? 'absolute' : 'relative',
    pageSize: PAGE_SIZES.includes(raw.pageSize as number) ? (raw.pageSize as number) : null,
    theme: raw.theme === 'dark' ? 'dark' : 'light',
    waterfallScale: WATERFALL_SCALES.includes(raw.waterfallScale as number)
      ? (raw.waterfallScale as number)
      : DEFAULTS.waterfallScale,
  };
}

let current = DEFAULTS;
const listeners = new Set<() => void>();

function apply(s: Settings): void {
  current = s;
  document.documentElement.dataset.theme = s.theme;
  for (const fn of listeners) fn();
}

export function loadSettings(): void {
  apply(read());
  addEventListener('storage', (e) => {
    if (e.key === KEY || e.key === null) apply(read());
  });
}

export function saveSettings(patch: Partial<Settings>): void {
  const next = { ...current, ...patch };
  localStorage.setItem(KEY, JSON.stringify(next));
  apply(next);
}

export function useSettings(): Settings {
  useFollow(listeners);
  return current;
}

/** A paged list's size: the person's choice, or the page's own. */
export function usePageSize(own: number): number {
  return useSettings().pageSize ?? own;
}

/** A time in the chosen format (the exact time stays in the element's title either way). */
export function timeText(epoch: number | null | undefined, now: number): string {
  return current.time === 'absolute' ? timestamp(epoch) : ago(epoch, now);
}
