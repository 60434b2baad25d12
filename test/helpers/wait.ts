// Waiting in tests: for a condition, never for a length of time. A test that sleeps is slow
// on a quiet machine and wrong on a loaded one; these poll until what the test needs holds,
// and only a failing test ever waits out the (generous) limit.

export interface WaitOptions {
  /** Give up after this long (default 60 s: only a failing test gets there). */
  timeoutMs?: number;
  /** Look again after this long (default 20 ms). */
  everyMs?: number;
}

// Generous: child processes and pooled connections come slowly at load averages above 20.
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_EVERY_MS = 20;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Wait until `check` holds; an exception from it counts as "not yet". Rejects with `what`
 * (and the last exception, if any) when the time is up.
 */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  opts: WaitOptions = {},
): Promise<void> {
  const end = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message ?? last}` : ''}`);
    await pause(opts.everyMs ?? DEFAULT_EVERY_MS);
  }
}

/**
 * Read `probe` until `done` holds of its value, and return that value; when the time is up,
 * return the last value read, so that the test's own expectation says what was wrong.
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  opts: WaitOptions = {},
): Promise<T> {
  const end = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  for (;;) {
    const v = await probe();
    if (done(v) || Date.now() > end) return v;
    await pause(opts.everyMs ?? DEFAULT_EVERY_MS);
  }
}
