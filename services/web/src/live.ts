// Data that stays current: a page's reads, read again when an event names what they show.
// Each read is one REST request with a limit; events only say "read again" (coalesced, at
// most one read in flight), so what is shown is always what the API says, never a patch
// the UI made up.

import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { onTick } from './clock.js';
import { events } from './events.js';

export interface Live<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Events within this window cause one read. Reads whose events come many times a second
 * (a running step's log appends, every running build's steps) pass a longer one.
 */
const COALESCE_MS = 150;

export function useLive<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: readonly unknown[],
  paths: readonly string[] = [],
  coalesceMs = COALESCE_MS,
  /** Which events call for a read (all when absent): e.g. only a shown builder's builds. */
  accept?: (message: unknown) => boolean,
): Live<T> {
  const [state, setState] = useState<{ data: T | undefined; error: ApiError | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const reloadRef = useRef<() => void>(() => {});
  // Read at the event, so that what is shown can change without subscribing again.
  const acceptRef = useRef(accept);
  acceptRef.current = accept;
  useEffect(() => {
    const ctl = new AbortController();
    let running = false;
    let again = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    setState((s) => ({ data: s.data, error: null, loading: true }));
    const run = async () => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        const data = await load(ctl.signal);
        if (!ctl.signal.aborted) setState({ data, error: null, loading: false });
      } catch (err) {
        if (ctl.signal.aborted) return;
        const e = err instanceof ApiError ? err : new ApiError(0, (err as Error).message);
        setState((s) => ({ data: s.data, error: e, loading: false }));
      } finally {
        running = false;
        if (again && !ctl.signal.aborted) {
          again = false;
          schedule();
        }
      }
    };
    const schedule = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        void run();
      }, coalesceMs);
    };
    reloadRef.current = () => void run();
    // Subscribed before the first read, so nothing written after that read is missed.
    const offs = paths.map((p) =>
      events.subscribe(p, (e) => {
        if ('reload' in e || !acceptRef.current || acceptRef.current(e.message)) schedule();
      }),
    );
    offs.push(events.onReconnect(schedule));
    void run();
    return () => {
      ctl.abort();
      if (timer) clearTimeout(timer);
      for (const off of offs) off();
    };
  }, [...deps, paths.join('|')]);
  return { ...state, reload: () => reloadRef.current() };
}

/** The current time, ticking every `ms` (live durations). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => onTick(ms, setNow), [ms]);
  return now;
}
