// A process re-reads its configuration file on SIGHUP and when the file changes (issue 33 §3):
// an API pod runs the new one from the next request (api/http/app-switch.ts), a master
// reconfigures the parts whose sections changed (master/reconfigure.ts). Here only what both
// share: the triggers, one reload at a time, and the outcome. A configuration that does not
// load is refused with the error a start would have ended with, logged, and the old one keeps
// running. Each reload, done or refused, is a row of the audit log (actor: what asked).
//
// The file's folder is watched, not the file: Kubernetes updates a mounted ConfigMap by
// pointing its `..data` symlink at a new folder, which changes no file named master.yaml and
// ends any watch held on the old one. An editor's save is several events (a temporary file, a
// rename), as is the symlink swap: they are taken as one after DEBOUNCE_MS of quiet, and a
// change to the folder that leaves the file's text as it was reloads nothing. A folder that is
// never quiet (another file written every few hundred milliseconds) would put the reload off for
// ever: it is looked at no later than MAX_DEBOUNCE_MS after the first event of a burst.
//
// The process read its file before the watch began (a pod answers /readyz first): the watch
// looks once as it begins, so a change made in between is not lost, and a first look that finds
// the file as it started reloads nothing and records nothing. Given the text the process
// started from, that first look compares texts and parses nothing: a parse is a start's
// second (222 ms of a master's CPU at the fleet's 1,000 builders, load/fleet/config-cpu.ts),
// spent as the master starts its first builds (issue 35).
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { recordAudit } from '../data/audit.js';
import type { Queryable } from '../db/pool.js';
import type { Logger } from '../telemetry/logger.js';
import { configErrorIn } from './fatal.js';
import { loadMasterConfig, type MasterConfig } from './master-config.js';
import { type ConfigVersion, configVersion } from './version.js';

const DEBOUNCE_MS = 300;
const MAX_DEBOUNCE_MS = 2_000;

/** What asked for a reload: the audit log's actor. */
export type ReloadTrigger = 'SIGHUP' | 'file';

export interface ReloadOptions {
  /** The configuration file (MASTER_CONFIG). */
  path: string;
  /**
   * Read and check the file as the process's start does (default: core's loader, the API's
   * check); a ConfigError refuses it.
   */
  load?: (path: string) => MasterConfig;
  log: Logger;
  /** Where the audit log is written. */
  db: Queryable;
  /** The configuration running now. */
  current(): ConfigVersion;
  /**
   * The file's text as read before the start loaded it (null: unreadable then): the first
   * look reads nothing more when the file still holds it.
   */
  startedFrom?: string | null;
  /**
   * Build what runs `config` and swap it in; a ConfigError refuses it (the old one stays). It
   * may answer the sections that changed, for the log line (`npm run reload` prints them), and
   * the parts that did not restart: the configuration runs, but the reload is incomplete.
   */
  apply(config: MasterConfig, version: ConfigVersion): Promise<ApplyAnswer | undefined>;
}

export interface ApplyAnswer {
  changed: string[];
  /** Parts that could not restart for it (the database or Redis away): the next SIGHUP tries. */
  notRestarted?: string[];
}

export interface ConfigReloader {
  /** Reload now; resolves once done or refused (reloads run one after another). */
  reload(trigger: ReloadTrigger): Promise<void>;
  stop(): void;
}

export function watchConfigFile(opts: ReloadOptions): ConfigReloader {
  const { log, path } = opts;
  // The text of the last file reloaded or refused; undefined until the first look.
  let lastText: string | null | undefined;
  let queue = Promise.resolve();
  const reload = (trigger: ReloadTrigger): Promise<void> => {
    queue = queue.then(() => reloadOnce(trigger));
    return queue;
  };

  async function reloadOnce(trigger: ReloadTrigger): Promise<void> {
    const text = readText(path);
    // A folder's change that left the file as it was (another file, a touch) is no reload.
    if (trigger === 'file' && text === lastText) return;
    const firstLook = lastText === undefined;
    if (trigger === 'file' && firstLook && opts.startedFrom !== undefined && text === opts.startedFrom) {
      lastText = text;
      return;
    }
    const previous = opts.current().hash;
    let outcome: { code: string; status: number; hash?: string };
    try {
      // Read again as a start reads it: an unreadable file is refused with the start's error.
      const config = (opts.load ?? loadMasterConfig)(path);
      const version = configVersion(config);
      if (trigger === 'file' && firstLook && version.hash === previous) {
        lastText = text;
        return;
      }
      // A SIGHUP builds anew even an unchanged file: what it names (a hook's secret file) is
      // read again. A file's change that parses to the same settings (a comment) is no change.
      const applied =
        trigger === 'SIGHUP' || version.hash !== previous ? await opts.apply(config, version) : undefined;
      lastText = text;
      if (applied?.notRestarted?.length) {
        // It runs, and /readyz says its hash; what did not restart is named, and audited as such.
        outcome = { code: 'RELOAD_INCOMPLETE', status: 500, hash: version.hash };
        log.error(
          { trigger, code: outcome.code, hash: version.hash, previous, ...applied },
          `configuration reloaded, but ${applied.notRestarted.join(', ')} did not restart: a SIGHUP tries again`,
        );
      } else {
        outcome = { code: 'success', status: 200, hash: version.hash };
        log.info({ trigger, hash: version.hash, previous, ...applied }, 'configuration reloaded');
      }
    } catch (err) {
      const config = configErrorIn(err);
      if (config) {
        // Refused until the file changes again; any other failure is tried again next event.
        lastText = text;
        outcome = { code: config.code, status: 400 };
        log.error(
          { trigger, code: config.code, problems: config.problems, hash: previous },
          `configuration reload refused, the running one is kept: ${config.message}`,
        );
      } else {
        // Not the file's fault (the database away while the new read pool starts): the old
        // configuration keeps serving, and the next reload tries again.
        outcome = { code: 'RELOAD_FAILED', status: 500 };
        log.error({ trigger, err, hash: previous }, 'configuration reload failed, the running one is kept');
      }
    }
    await recordAudit(opts.db, {
      at: Math.floor(Date.now() / 1000),
      actor: trigger,
      address: null,
      method: 'reloadConfig',
      path,
      args: { previous, ...(outcome.hash ? { hash: outcome.hash } : {}) },
      outcome: outcome.code,
      status: outcome.status,
    }).catch((err: Error) => log.warn({ err: err.message }, 'configuration reload not audited'));
  }

  const onSighup = () => void reload('SIGHUP');
  process.on('SIGHUP', onSighup);
  let timer: NodeJS.Timeout | null = null;
  let burstStart = 0;
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dirname(path), () => {
      if (!timer) burstStart = Date.now();
      // A burst this long keeps the look already set.
      else if (Date.now() - burstStart >= MAX_DEBOUNCE_MS - DEBOUNCE_MS) return;
      else clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        void reload('file');
      }, DEBOUNCE_MS);
    });
    watcher.on('error', (err) =>
      log.warn({ err: err.message, path }, 'configuration file no longer watched'),
    );
  } catch (err) {
    // SIGHUP still reloads.
    log.warn({ err: (err as Error).message, dir: dirname(path) }, 'configuration folder not watched');
  }
  log.info({ path, file: basename(path) }, 'configuration reloads on SIGHUP and when the file changes');
  void reload('file');
  return {
    reload,
    stop() {
      process.off('SIGHUP', onSighup);
      if (timer) clearTimeout(timer);
      watcher?.close();
    },
  };
}

/** The file's text, null when it cannot be read. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Node ends a process on a SIGHUP nobody listens to. One that comes while the process starts
 * (`npm run reload` at the wrong moment, a rollout's signal) is held until the process's
 * reloader takes over, then given to it; a process with no file to reload keeps ignoring them.
 */
export function holdEarlySighup(log: Logger): { handOver(reloader: ConfigReloader | null): void } {
  let held = false;
  const onEarly = () => {
    held = true;
  };
  process.on('SIGHUP', onEarly);
  return {
    handOver(reloader) {
      process.off('SIGHUP', onEarly);
      if (!reloader) {
        process.on('SIGHUP', () =>
          log.warn('SIGHUP: no configuration file to reload (MASTER_CONFIG is not set)'),
        );
        return;
      }
      if (held) void reloader.reload('SIGHUP');
    },
  };
}
