// Waiting in tests: for a condition, never for a length of time. A test that sleeps is slow
// on a quiet machine and wrong on a loaded one; waitFor polls until what the test needs holds,
// and only a failing test ever waits out the limit. It is the suite's one wait helper (issue
// 29 §5: three used to exist, one here, one in helpers/processes.ts that watched a process,
// one in api/events/lib.ts that polled faster); `eventually` below is its twin for a test that
// wants the value read rather than a yes.
//
// Give each wait a `what` that says which condition failed, and, when something can make the
// condition impossible (a process exiting, a connection closing), a `gaveUp` or `proc` so
// that the wait fails at once with the reason rather than at the limit.

/** What a wait needs to know of a child process (helpers/processes.ts: Running). */
export interface WatchedProcess {
  child: { exitCode: number | null; signalCode?: NodeJS.Signals | null };
  output(): string;
}

export interface WaitOptions {
  /** Give up after this long (default 60 s, or 90 s when watching a process). */
  timeoutMs?: number;
  /**
   * Look again after this long. By default 20 ms for the first second, then 100 ms (and
   * 100 ms all along when watching a process): see `pauseAfter`.
   */
  everyMs?: number;
  /** Fail at once, with its output, if this process exits while waiting. */
  proc?: WatchedProcess;
  /**
   * Fail at once when this returns a reason: the condition can no longer come true (the
   * socket closed, the build finished the other way), so waiting out the limit says nothing.
   */
  gaveUp?: () => string | undefined | false;
}

// Generous: child processes and pooled connections come slowly at load averages above 20.
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_EVERY_MS = 20;
// How long a process (or what it does) may take: Node processes start slowly on a loaded
// machine, and a wait that names its process ends as soon as that process exits, so only a
// live process that never gets there waits this out. Polled less often: each look is
// usually an HTTP request to that process.
const PROCESS_TIMEOUT_MS = 90_000;
const PROCESS_EVERY_MS = 100;
// A wait that has not held within its first second looks every 100 ms, not every 20 ms. Most
// waits hold within it; the long ones (a build to finish, a master to take over, an expiry)
// poll a database or an API process, each look CPU the tests beside them need (the suite is
// CPU-bound). It halved the looks of two end-to-end files (2,211 -> 1,107), a few CPU s a run
// (docs/testing.md, "The heaviest files' own CPU"). A state that lasts less than 100 ms is no
// condition to wait for on a loaded machine anyway: a 20 ms pause there often lasts longer.
const FAST_FOR_MS = 1_000;
const SLOW_EVERY_MS = 100;

/** The pause before the next look, `waited` ms into a wait that gave no `everyMs`. */
function pauseAfter(waited: number): number {
  return waited < FAST_FOR_MS ? DEFAULT_EVERY_MS : SLOW_EVERY_MS;
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function exited(proc: WatchedProcess): boolean {
  return proc.child.exitCode !== null || (proc.child.signalCode ?? null) !== null;
}

/**
 * Wait until `check` holds; an exception from it counts as "not yet". Rejects with `what`
 * (and the last exception, if any) when the time is up, and at once when `opts.proc` exits or
 * `opts.gaveUp` names a reason.
 */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  opts: WaitOptions = {},
): Promise<void> {
  const { proc, gaveUp } = opts;
  const start = Date.now();
  const end = start + (opts.timeoutMs ?? (proc ? PROCESS_TIMEOUT_MS : DEFAULT_TIMEOUT_MS));
  const every = opts.everyMs ?? (proc ? PROCESS_EVERY_MS : undefined);
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
      last = undefined;
    } catch (err) {
      last = err;
    }
    const why = last ? `: ${(last as Error).message ?? last}` : '';
    if (proc && exited(proc)) throw new Error(`${what}: process exited${why}\n${proc.output()}`);
    const reason = gaveUp?.();
    if (reason) throw new Error(`${what}: gave up, ${reason}${why}`);
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${why}${proc ? `\n${proc.output()}` : ''}`);
    await pause(every ?? pauseAfter(Date.now() - start));
  }
}

/**
 * Read `probe` until `done` holds of its value, and return that value; when the time is up,
 * return the last value read, so that the test's own expectation says what was wrong.
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  opts: Pick<WaitOptions, 'timeoutMs' | 'everyMs'> = {},
): Promise<T> {
  const start = Date.now();
  const end = start + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  for (;;) {
    const v = await probe();
    if (done(v) || Date.now() > end) return v;
    await pause(opts.everyMs ?? pauseAfter(Date.now() - start));
  }
}
