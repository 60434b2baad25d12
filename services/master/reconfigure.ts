// What a master does with a reloaded configuration (issue 33 §3; the triggers and the audit row
// are core/config/reload.ts's). It reconfigures the parts whose sections changed, compared by
// hash, and leaves the rest alone; it never stops a build. Why this and not a restart of the
// master's parts: a restart hands running builds back (they end RETRY and run again), which is
// exactly the interruption a reload must not cause.
//
// - Builds keep the configuration they started with: the runner gives each build the
//   configuration current when it is claimed (its builder's steps, locks' accesses, properties,
//   secrets), so a build that started finishes with its own, and the next one gets the new.
// - Builders and workers: membership records the new lists (builder_masters, configured
//   workers); the distributor claims for the new builders from its next pass. A removed
//   builder's running build finishes; its pending requests stay for a master that still has
//   it (during a rollout) or for the builder's return.
// - A removed worker takes no new build; its connection is closed once its last build has
//   ended (runner.whenWorkerIdle), and it cannot log in again. A worker whose password
//   changed keeps its connection; the new password is asked at its next login.
// - Schedulers, force schedulers and change sources: each one whose settings changed is
//   restarted, the others run on (schedulers/manager.ts); reporters and old build cancellers
//   restart when their sections change (a reporter's catch-up queues what it missed).
// - Locks: a lock's limits are the cluster's, one at a time: a changed limit applies to every
//   acquisition from the reload on, a removed lock stays known to the builds that use it.
//
// What only a restart changes is refused with CONFIG_RESTART_REQUIRED, and the old
// configuration keeps running (so /readyz's hash is always what runs): the worker ports
// (`protocols`), the liveness timings, the log codec, retention and the object store (the
// cluster's jobs are scheduled with them at start). The environment (database, Redis, ports) is read at start only.
import { createHash } from 'node:crypto';
import { ConfigError } from '../core/config/errors.js';
import { type MasterConfig, workerPassword } from '../core/config/master-config.js';
import type { ApplyAnswer } from '../core/config/reload.js';
import type { ConfigVersion } from '../core/config/version.js';
import { pausedWorkerNames } from '../core/data/index.js';
import type { Queryable } from '../core/db/pool.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { Locks } from './builds/locks.js';
import type { BuildRunner } from './builds/runner.js';
import type { Membership } from './membership.js';
import type { Restartable } from './restartable.js';
import type { SchedulerManager } from './schedulers/index.js';
import { type SecretsProvider, secretsProviders } from './secrets.js';
import type { ConnectedWorkers } from './workers/connection.js';

/** Top-level keys a running master cannot take on: they need a restart. */
export const RESTART_ONLY_KEYS = [
  'protocols',
  'master_expiry_seconds',
  'worker_silence_seconds',
  'database_outage_seconds',
  'log_compression',
  'retention',
  'object_store',
] as const satisfies readonly (keyof MasterConfig)[];

/** The parts a reload may touch, and the sections each one reads. */
export const SECTIONS = {
  reporters: ['reporters', 'title', 'buildbotURL', 'builders'],
  cancellers: ['services'],
  secrets: ['secrets'],
} as const satisfies Record<string, readonly (keyof MasterConfig)[]>;

function hashOf(config: MasterConfig, keys: readonly (keyof MasterConfig)[]): string {
  const picked = keys.map((k) => [k, config[k]]);
  return createHash('sha256').update(JSON.stringify(picked)).digest('hex');
}

/** Whether `keys` read the same in both configurations. */
export function sameSections(
  a: MasterConfig,
  b: MasterConfig,
  keys: readonly (keyof MasterConfig)[],
): boolean {
  return hashOf(a, keys) === hashOf(b, keys);
}

/** Refuse a configuration that changes what only a restart changes. */
export function checkReloadable(running: MasterConfig, next: MasterConfig): void {
  const changed = RESTART_ONLY_KEYS.filter((k) => !sameSections(running, next, [k]));
  if (changed.length)
    throw new ConfigError(
      'CONFIG_RESTART_REQUIRED',
      `a running master cannot take on a change of ${changed.join(', ')}: restart it to apply this file`,
      changed.map((k) => `${k}: changed; applied at the master's next start`),
    );
}

/** The top-level sections that differ, for the reload's log line. */
export function changedSections(before: MasterConfig, after: MasterConfig): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof MasterConfig>;
  return [...keys].filter((k) => !sameSections(before, after, [k]));
}

/** Workers of `before` that `after` no longer names. */
export function removedWorkers(before: MasterConfig, after: MasterConfig): string[] {
  const kept = new Set(after.workers.map((w) => w.name));
  return before.workers.map((w) => w.name).filter((n) => !kept.has(n));
}

/** What a master runs now: replaced as a whole by a reload that is taken on. */
export interface RunningConfig {
  config: MasterConfig;
  version: ConfigVersion;
  secrets: SecretsProvider;
}

export interface ReconfigureDeps {
  running: RunningConfig;
  db: Queryable;
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  membership: Pick<Membership, 'reconfigure'>;
  locks: Pick<Locks, 'reconfigure'>;
  runner: Pick<BuildRunner, 'reconfigure' | 'whenWorkerIdle'>;
  workers: ConnectedWorkers;
  /** The operators' paused workers (cluster-events.ts): a worker added is looked up. */
  paused: Set<string>;
  schedulers: Pick<SchedulerManager, 'reconfigure'>;
  restartables: readonly Restartable<unknown>[];
  /** Tell the distributor that it may have work (new builders, workers). */
  wake: () => void;
}

export type Reconfigure = (next: MasterConfig, version: ConfigVersion) => Promise<ApplyAnswer>;

/** The master's reconfigure: reloads one after another; a refused one does not refuse the next. */
export function reconfigurer(d: ReconfigureDeps): Reconfigure {
  const { running, log } = d;
  let reloading: Promise<unknown> = Promise.resolve();
  // Parts a reload could not restart: the next reload restarts them whatever changed.
  const unrestarted = new Set<string>();

  /** A worker the configuration no longer names: its connection closes once its builds end. */
  const letGo = (name: string) =>
    void d.runner.whenWorkerIdle(name).then(() => {
      // Named again by a later reload meanwhile: it stays.
      if (running.config.workers.some((w) => w.name === name)) return;
      const conn = d.workers.get(name);
      if (!conn) return;
      log.info({ worker: name }, 'worker removed from the configuration: closing its connection');
      conn.shutdown('this worker was removed from the master’s configuration');
    });

  const restart = async (part: string, hash: string, run: () => Promise<void>) => {
    try {
      await run();
      unrestarted.delete(part);
    } catch (err) {
      unrestarted.add(part);
      log.error({ part, err: (err as Error).message, hash }, 'reloaded part did not restart');
    }
  };

  const once = async (next: MasterConfig, version: ConfigVersion) => {
    const before = running.config;
    checkReloadable(before, next);
    // Read before anything changes: a secrets folder anyone may read is refused as at start.
    const secrets = sameSections(before, next, SECTIONS.secrets)
      ? running.secrets
      : secretsProviders(next.secrets, d.env, log);
    // Every worker's password, as the workers' port reads them at start: one that cannot be
    // read (its password_file not there yet) refuses the file with the start's error.
    for (const w of next.workers) workerPassword(w, d.env);
    // The database first: if it is away, nothing has changed and the reload is refused.
    await d.membership.reconfigure(next);
    // From here on, what the next pass claims and the next build runs is the new one.
    Object.assign(running, { config: next, version, secrets });
    d.locks.reconfigure(next.locks);
    d.runner.reconfigure({ config: next, secrets });
    d.workers.reconfigure?.(next);
    const added = next.workers.map((w) => w.name).filter((n) => !before.workers.some((w) => w.name === n));
    for (const name of await pausedWorkerNames(d.db, added)) d.paused.add(name);
    for (const name of removedWorkers(before, next)) letGo(name);
    d.wake();
    // The new configuration runs from here: a part that cannot restart now (the database or
    // Redis away) is logged, and the next reload (a SIGHUP) restarts it.
    await restart('schedulers', version.hash, () => d.schedulers.reconfigure(next));
    for (const r of d.restartables)
      if (!sameSections(before, next, r.sections) || unrestarted.has(r.name))
        await restart(r.name, version.hash, () => r.restart(next));
    return {
      changed: changedSections(before, next),
      ...(unrestarted.size ? { notRestarted: [...unrestarted] } : {}),
    };
  };

  return (next, version) => {
    const done = reloading.catch(() => {}).then(() => once(next, version));
    reloading = done;
    return done;
  };
}
