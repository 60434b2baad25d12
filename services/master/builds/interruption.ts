// How a running build is interrupted, as signals rather than flags: a stop (an operator's, or
// a cancel) and a loss (its worker went away, its output could not be stored, or the master
// is leaving). Each step runs with an AbortSignal; its abort reason is an Interruption that
// carries the results the step ends with.
//
// Buildbot's rules, which the signals encode: a stop interrupts the step running when it
// comes, that step ends with the stop's results (CANCELLED unless the stop says otherwise),
// later steps run only if alwaysRun, and then in full (a stop never cuts them short); a lost
// build runs nothing more and ends RETRY, so that its request runs again elsewhere.
import { Results } from '../../core/results.js';
import { reasonText, type WorkerConnection } from '../workers/connection.js';

export class Interruption extends Error {
  override name = 'Interruption';
  constructor(
    /** The results the interrupted step (and the build, at worst) ends with. */
    readonly results: number,
    reason: string,
    /**
     * Kill the command at once, without the grace an interrupt gives it: its request may
     * already run elsewhere (the claim is gone, or the master may be expired any moment).
     */
    readonly immediate = false,
  ) {
    super(reason);
  }
}

/** The results of a step whose signal aborted: the interruption's; RETRY for any other abort. */
export function interruptedResults(signal: AbortSignal): number {
  return signal.reason instanceof Interruption ? signal.reason.results : Results.RETRY;
}

/** A controller aborted when any of `sources` aborts (with its reason), until disposed. */
function follow(sources: readonly AbortSignal[]): { signal: AbortSignal; dispose: () => void } {
  const ctl = new AbortController();
  const listeners = sources.map((s) => {
    const abort = () => ctl.abort(s.reason);
    return [s, abort] as const;
  });
  const dispose = () => {
    for (const [s, abort] of listeners) s.removeEventListener('abort', abort);
  };
  for (const [s, abort] of listeners) {
    if (s.aborted) {
      abort();
      break;
    }
    s.addEventListener('abort', abort, { once: true });
  }
  return { signal: ctl.signal, dispose };
}

// Listeners rather than AbortSignal.any: a worker's link lives as long as the worker, and
// what a build hangs on it must go when the build ends, which dispose() makes explicit.
export class BuildInterrupts {
  private readonly stopping = new AbortController();
  private readonly losing = new AbortController();
  private readonly disposers: (() => void)[] = [];
  /**
   * When the build's worker was found gone, if it was: its commands may run on until the
   * worker notices it lost this master (liveness.ts), so its request waits until then.
   */
  workerLostAt: number | null = null;

  constructor(worker: WorkerConnection) {
    const onLost = () => {
      this.workerLostAt ??= Date.now();
      this.lose(`worker lost: ${reasonText(worker.lost.reason)}`);
    };
    if (worker.lost.aborted) onLost();
    else {
      worker.lost.addEventListener('abort', onLost, { once: true });
      this.disposers.push(() => worker.lost.removeEventListener('abort', onLost));
    }
  }

  /** Stop the build (the first stop's reason and results stand). */
  stop(reason: string, results: number = Results.CANCELLED): void {
    this.stopping.abort(new Interruption(results, reason));
  }

  /** Lose the build: nothing more runs, and it ends RETRY (`immediate`: its command is killed at once). */
  lose(reason: string, immediate = false): void {
    this.losing.abort(new Interruption(Results.RETRY, reason, immediate));
  }

  /** The stop, once there was one. */
  get stopped(): Interruption | null {
    return this.stopping.signal.aborted ? (this.stopping.signal.reason as Interruption) : null;
  }

  get lost(): boolean {
    return this.losing.signal.aborted;
  }

  /**
   * The signal of a step that starts now: a loss interrupts it; a stop does too, unless the
   * build was stopped before the step began (an alwaysRun step after a stop runs in full).
   */
  forStep(): { signal: AbortSignal; dispose: () => void } {
    const f = follow(this.stopped ? [this.losing.signal] : [this.stopping.signal, this.losing.signal]);
    this.disposers.push(f.dispose);
    return f;
  }

  /** The build is over: let go of the worker's signal. */
  dispose(): void {
    for (const d of this.disposers.splice(0)) d();
  }
}
