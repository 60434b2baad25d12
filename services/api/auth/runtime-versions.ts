// /config's `versions`: what this API runs, as name/version pairs as Buildbot's /config lists
// them (Python, Buildbot, Twisted there; Flotilla, Node and PostgreSQL here), shown on the UI's
// about page. PostgreSQL's is read once, on the first /config that needs it; a failed read is
// left out of that answer and tried again on the next.
import { serverVersion } from '../../core/data/server-version.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { flotillaVersion } from '../../core/version.js';

export type Versions = () => Promise<[name: string, version: string][]>;

export function runtimeVersions(db: Queryable, log: Logger): Versions {
  let postgres: Promise<string | null> | null = null;
  return async () => {
    postgres ??= serverVersion(db).catch((err: Error) => {
      log.warn({ err: err.message }, 'PostgreSQL version not read for /config');
      postgres = null;
      return null;
    });
    const pg = await postgres;
    return [
      ['Flotilla', flotillaVersion()],
      ['Node', process.versions.node],
      ...(pg ? [['PostgreSQL', pg] as [string, string]] : []),
    ];
  };
}
