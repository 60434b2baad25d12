// The builds the waterfall shows: the newest page of the builders on screen (one read with
// `builderid__in`), then older pages as the person scrolls (`buildid__lt` the oldest held,
// one read per page, never two at once), kept by id. Live from the builds' own events,
// which carry the build as the API has it: a build that starts or finishes replaces its one
// entry and nothing is read again, so 20 running builds cost no request. After a reconnect
// whose missed events are gone (`reload`) the newest page is read again and merged.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getPage } from '../api.js';
import { events } from '../events.js';
import type { Build } from '../types.js';

export const WATERFALL_FIELDS = [
  'buildid',
  'number',
  'builderid',
  'results',
  'complete',
  'started_at',
  'complete_at',
  'state_string',
];

export interface WaterfallBuilds {
  builds: ReadonlyMap<number, Build>;
  /** The newest page was read. */
  ready: boolean;
  /** Older builds may exist. */
  more: boolean;
  loading: boolean;
  error: ApiError | null;
  older: () => void;
}

export function useWaterfallBuilds(builderids: readonly number[] | null, size: number): WaterfallBuilds {
  const [state, setState] = useState<Omit<WaterfallBuilds, 'older'>>({
    builds: new Map(),
    ready: false,
    more: false,
    loading: true,
    error: null,
  });
  const olderRef = useRef<() => void>(() => {});
  const key = builderids?.join(',') ?? null;
  useEffect(() => {
    if (builderids === null) return;
    const ctl = new AbortController();
    const ids = new Set(builderids);
    const held = new Map<number, Build>();
    let oldest = Number.POSITIVE_INFINITY;
    let more = builderids.length > 0;
    let ready = builderids.length === 0;
    let loading = false;
    let error: ApiError | null = null;
    const publish = () => setState({ builds: new Map(held), ready, more, loading, error });
    const read = async (older: boolean) => {
      if (ctl.signal.aborted || builderids.length === 0) return;
      loading = true;
      publish();
      try {
        const page = await getPage<Build>(
          'builds',
          'builds',
          {
            builderid__in: builderids,
            order: '-buildid',
            limit: size,
            field: WATERFALL_FIELDS,
            buildid__lt: older ? oldest : undefined,
          },
          ctl.signal,
        );
        for (const b of page.items) {
          // A read answered after a build's `finished` event must not bring it back to running.
          if (!held.get(b.buildid)?.complete) held.set(b.buildid, b);
          oldest = Math.min(oldest, b.buildid);
        }
        if (older || !ready) more = page.items.length === size;
        ready = true;
        error = null;
      } catch (err) {
        if (ctl.signal.aborted) return;
        error = err instanceof ApiError ? err : new ApiError(0, (err as Error).message);
      }
      loading = false;
      publish();
    };
    const onEvent = (e: { key: string; message: unknown } | { reload: true }) => {
      if ('reload' in e) {
        void read(false);
        return;
      }
      const b = e.message as Build;
      // A build below the oldest held would stand alone above a gap of builds not read.
      if (!ids.has(b.builderid) || (ready && more && b.buildid < oldest)) return;
      held.set(b.buildid, b);
      publish();
    };
    // Subscribed before the first read, so nothing written after it is missed.
    const offs = [
      events.subscribe('builds/*/new', onEvent),
      events.subscribe('builds/*/finished', onEvent),
      events.onReconnect(() => void read(false)),
    ];
    olderRef.current = () => {
      if (!loading && more && ready) void read(true);
    };
    void read(false);
    return () => {
      ctl.abort();
      for (const off of offs) off();
    };
  }, [key, size]);
  return { ...state, older: () => olderRef.current() };
}
