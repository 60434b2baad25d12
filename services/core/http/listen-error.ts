// A port a process cannot listen on is a start-up error like any other (issue 28): one line
// naming the address and the setting that moves it, exit 2, no stack trace. Node says only
// `listen EADDRINUSE: address already in use 0.0.0.0:9989`, with neither the listener nor
// the setting, and a master died of it with an unhandled rejection.
import { ConfigError } from '../config/errors.js';

export interface ListenSite {
  /** What listens, as the reader knows it ("the worker port", "the probe port"). */
  what: string;
  host: string;
  port: number;
  /** The setting that gave the port (an environment variable or a configuration key). */
  portSetting: string;
  /** The setting that gave the host. */
  hostSetting: string;
}

const WHY: Record<string, (s: ListenSite) => string> = {
  EADDRINUSE: (s) => `the port is in use: stop what holds it, or set ${s.portSetting} to a free port`,
  EACCES: (s) => `permission denied (ports below 1024 need privileges): set ${s.portSetting} to another port`,
  EADDRNOTAVAIL: (s) => `no interface of this machine has that address: set ${s.hostSetting} to one it has`,
};

/** Node's listen() error as a ConfigError naming the site's settings; any other error as it was. */
function listenError(err: unknown, site: ListenSite): unknown {
  const why = WHY[(err as NodeJS.ErrnoException | null)?.code ?? ''];
  if (!why) return err;
  return new ConfigError(
    'CONFIG_LISTEN',
    `${site.what} cannot listen on ${site.host}:${site.port} (${site.portSetting}): ${why(site)}`,
  );
}

/** Listen through `listen`, its failure said as listenError says it. */
export async function listenAt<T>(site: ListenSite, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    throw listenError(err, site);
  }
}
