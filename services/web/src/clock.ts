// One timer per period for the whole page, however many cells tick (useNow, live.ts):
// Home's 20 running builds each had their own, 20 wake-ups a second, each a task of the
// page's thread (Home measured 8.5-25.6% of a core while 20 builds ran on a machine at load
// 35-59, where every task waits for a core; load/results/web-pages.md). One task a second
// now tells them all.
type Listener = (t: number) => void;

const clocks = new Map<number, { timer: ReturnType<typeof setInterval>; listeners: Set<Listener> }>();

/** Calls `fn` with the time every `ms`, on the one timer of that period; returns the unsubscribe. */
export function onTick(ms: number, fn: Listener): () => void {
  let clock = clocks.get(ms);
  if (!clock) {
    const listeners = new Set<Listener>();
    const timer = setInterval(() => {
      const t = Date.now();
      for (const l of listeners) l(t);
    }, ms);
    clock = { timer, listeners };
    clocks.set(ms, clock);
  }
  clock.listeners.add(fn);
  return () => {
    const c = clocks.get(ms);
    if (!c) return;
    c.listeners.delete(fn);
    if (c.listeners.size === 0) {
      clearInterval(c.timer);
      clocks.delete(ms);
    }
  };
}
