// The timings that keep one build request from running twice at once, in one place, and
// the rules between them (issue 15). A request runs again elsewhere only once its master is
// expired (silent for E = master_expiry_seconds) or has handed it back, so every way a
// master's command could outlive that moment must end before it:
//
// - a master that stops (a frozen VM, a long pause, a network cut from its workers) stops
//   being heard by its workers: each worker pings its master and kills that master's
//   commands at once when it has heard nothing for S = worker_silence_seconds, checking
//   four times per S. So every command is dead within B = 1.25 S + 0.5 s of the master's
//   last word, and the master's last heartbeat was at most H before that: B + H + 1 <= E;
// - a master that cannot reach PostgreSQL cannot heartbeat either. Its builds go on (their
//   output held back until it can be stored) while its last successful heartbeat is less than
//   L = database_outage_seconds old; then it kills their commands through its workers, at
//   once (checked every second). So L + 3 <= E; and L > H + 1, or a heartbeat that is merely
//   due would already cost builds;
// - a master that loses a worker cannot know that the worker's commands stopped: that worker
//   kills them within B of its own last word from the master. So the build's request goes
//   back B + 1 s after the loss was noticed, not at once;
// - a master that starts under the name of a previous life that did not stop cleanly waits
//   until B + 1 s after that life's last heartbeat before it cleans up after it.
//
// The margins (1 s) cover timers firing late and messages in flight on one machine or a LAN;
// clocks of different hosts are assumed within them (NTP).
import type { MasterConfig } from '../core/config/master-config.js';

// Buildbot 3.7 calls masterActive every minute; the contract asks for at least once a minute.
// A shorter expiry (master_expiry_seconds) needs a heartbeat well inside it.
export const HEARTBEAT_MS = 30_000;
export function heartbeatMs(expirySeconds: number): number {
  return Math.min(HEARTBEAT_MS, (expirySeconds * 1000) / 4);
}

const MARGIN_MS = 1000;
const MAX_DEFAULT_SILENCE_MS = 30_000;
const MAX_DEFAULT_OUTAGE_MS = 60_000;

export interface Liveness {
  /** E: a master silent this long is expired. */
  expiryMs: number;
  /** H: how often a master heartbeats. */
  heartbeatMs: number;
  /** S: a worker that hears nothing from its master this long kills its commands. */
  workerSilenceMs: number;
  /** B: within this of a master's last word, its workers' commands are dead. */
  lostMasterBoundMs: number;
  /** L: how long a master's builds ride out a database they cannot reach. */
  outageLimitMs: number;
}

/** The worker side's bound for a silence of `silenceMs`: it checks four times per silence. */
export function lostMasterBound(silenceMs: number): number {
  return silenceMs * 1.25 + 500;
}

export function livenessOf(config: MasterConfig): Liveness {
  const expiryMs = config.master_expiry_seconds * 1000;
  const hb = heartbeatMs(config.master_expiry_seconds);
  const workerSilenceMs =
    config.worker_silence_seconds !== undefined
      ? config.worker_silence_seconds * 1000
      : Math.min(MAX_DEFAULT_SILENCE_MS, expiryMs / 4);
  const outageLimitMs =
    config.database_outage_seconds !== undefined
      ? config.database_outage_seconds * 1000
      : Math.min(MAX_DEFAULT_OUTAGE_MS, expiryMs - 3 * MARGIN_MS);
  return {
    expiryMs,
    heartbeatMs: hb,
    workerSilenceMs,
    lostMasterBoundMs: lostMasterBound(workerSilenceMs),
    outageLimitMs,
  };
}

/** What is wrong with the configuration's timings (the start refuses them), in its words. */
export function livenessProblems(config: MasterConfig): string[] {
  const l = livenessOf(config);
  const s = (ms: number) => `${+(ms / 1000).toFixed(2)} s`;
  const problems: string[] = [];
  if (l.lostMasterBoundMs + l.heartbeatMs + MARGIN_MS > l.expiryMs)
    problems.push(
      `worker_silence_seconds: ${s(l.workerSilenceMs)} lets a frozen master's commands run ${s(l.lostMasterBoundMs)}, ` +
        `which with a heartbeat every ${s(l.heartbeatMs)} does not end before its expiry (master_expiry_seconds ${s(l.expiryMs)}): ` +
        `at most ${s((l.expiryMs - l.heartbeatMs - MARGIN_MS - 500) / 1.25)}`,
    );
  if (l.outageLimitMs + 3 * MARGIN_MS > l.expiryMs)
    problems.push(
      `database_outage_seconds: ${s(l.outageLimitMs)} lets builds run past the master's expiry ` +
        `(master_expiry_seconds ${s(l.expiryMs)}): at most ${s(l.expiryMs - 3 * MARGIN_MS)}`,
    );
  if (l.outageLimitMs <= l.heartbeatMs + MARGIN_MS)
    problems.push(
      `database_outage_seconds: ${s(l.outageLimitMs)} is not longer than a heartbeat period and a margin ` +
        `(${s(l.heartbeatMs + MARGIN_MS)}): builds would end whenever a heartbeat is merely due; raise master_expiry_seconds`,
    );
  return problems;
}
