// Waiting for something for a bounded time: an answer that must come within a deadline (a
// Redis call of a login, a readiness check, a worker's reply), or a stopping process giving
// its running builds, or its last events, so long before it goes on without them.
//
// The deadline is judged after the event loop has read its sockets once more. Timers run
// before the poll for I/O, so a process held off the CPU past the deadline (a loaded machine,
// a long collection) would otherwise find its timer first and refuse an answer already
// waiting in the socket: a CI run at load 15 answered a right-password login 503 so.

/** `p`'s outcome if it settles within `ms`; otherwise `late()` is thrown. */
export async function withinDeadline<T>(p: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const past = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      immediate = setImmediate(() => reject(late()));
    }, ms);
  });
  try {
    return await Promise.race([p, past]);
  } finally {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  }
}

class Late extends Error {}

/** True if `p` settled within `ms` (its rejection counts as settled); false if the time ran out first. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = p.then(
    () => true,
    () => true,
  );
  return withinDeadline(settled, ms, () => new Late()).catch(() => false);
}
