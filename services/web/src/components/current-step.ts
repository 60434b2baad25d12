// What a running build is doing now: its first unfinished step, as Buildbot's UI shows it
// in place of the build's own state ("starting" for its whole run until it finishes).
// One small read per running build (limit 1, four fields), never the build's whole list;
// for lists of running builds (home, a builder), one read per build when it is first seen,
// then the steps' own events (they carry the step) keep it current: reading every running
// build's step again on each step event made 20 reads a second with 20 builds running.
import { useEffect, useRef, useState } from 'preact/hooks';
import { getPage } from '../api.js';
import { events } from '../events.js';
import type { Build, Step } from '../types.js';

type Running = Pick<Build, 'buildid' | 'complete'>;

export async function currentStep(buildid: number, signal: AbortSignal): Promise<Step | null> {
  const page = await getPage<Step>(
    `builds/${buildid}/steps`,
    'steps',
    {
      complete: false,
      order: 'number',
      limit: 1,
      field: ['name', 'state_string', 'number', 'started_at', 'complete'],
    },
    signal,
  );
  return page.items[0] ?? null;
}

/** A build's status as read: the current step while it runs, else its own state. */
export function statusOf(
  build: Pick<Build, 'complete' | 'state_string'>,
  step: Step | null | undefined,
): string {
  return !build.complete && step ? `${step.name}: ${step.state_string}` : build.state_string;
}

type Tracked = Map<number, Step | null>;

/** A step event's step is the build's current one: it runs, and is not behind the one held. */
function follow(held: Tracked, s: Step & { buildid: number }): boolean {
  if (!held.has(s.buildid)) return false;
  const cur = held.get(s.buildid);
  if (!s.complete && s.started_at && (!cur || s.number >= cur.number)) {
    held.set(s.buildid, s);
    return true;
  }
  if (s.complete && cur?.stepid === s.stepid) {
    held.set(s.buildid, { ...cur, ...s });
    return true;
  }
  return false;
}

/** Reads the current step of these builds into `held` (a later one an event brought stays). */
async function readInto(held: Tracked, ids: readonly number[], signal: AbortSignal): Promise<void> {
  await Promise.all(
    ids.map((id) =>
      currentStep(id, signal)
        .then((s) => {
          const cur = held.get(id);
          if (held.has(id) && (!cur || !s || s.number >= cur.number)) held.set(id, s);
        })
        .catch(() => {
          // the build's own state is shown instead
        }),
    ),
  );
}

/** The current step of each running build of `builds`, by buildid, kept current by events. */
export function useCurrentSteps(builds: readonly Running[] | undefined): ReadonlyMap<number, Step> {
  const held = useRef<Tracked>(new Map());
  const [shown, setShown] = useState<ReadonlyMap<number, Step>>(new Map());
  const publish = () => {
    const out = new Map<number, Step>();
    for (const [id, s] of held.current) if (s && !s.complete) out.set(id, s);
    setShown(out);
  };
  const running = (builds ?? []).filter((b) => !b.complete).map((b) => b.buildid);
  const key = running.join(',');
  useEffect(() => {
    const ctl = new AbortController();
    const read = (ids: readonly number[]) =>
      readInto(held.current, ids, ctl.signal).then(() => {
        if (!ctl.signal.aborted) publish();
      });
    const offs = [
      events.subscribe('steps/*/*', (e) => {
        if (!('reload' in e) && follow(held.current, e.message as Step & { buildid: number })) publish();
      }),
      events.onReconnect(() => void read([...held.current.keys()])),
    ];
    return () => {
      ctl.abort();
      for (const off of offs) off();
    };
  }, []);
  useEffect(() => {
    const ctl = new AbortController();
    const now = new Set(running);
    for (const id of held.current.keys()) if (!now.has(id)) held.current.delete(id);
    const fresh = running.filter((id) => !held.current.has(id));
    for (const id of fresh) held.current.set(id, null);
    publish();
    void readInto(held.current, fresh, ctl.signal).then(() => {
      if (!ctl.signal.aborted) publish();
    });
    return () => ctl.abort();
  }, [key]);
  return shown;
}
