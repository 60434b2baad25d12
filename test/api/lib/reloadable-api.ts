// An API process whose MASTER_CONFIG is a symlink, in a folder of its own, to a copy of the
// oracle's configuration in another folder, as a mounted ConfigMap is laid out: editing the
// copy changes nothing in the folder the API watches (services/core/config/reload.ts), so a SIGHUP
// alone reloads it; swapping the symlink is the change Kubernetes makes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiProcess, apiProcess } from '../../helpers/api.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { ORACLE_MASTER_YAML } from './harness.js';

export interface ReloadableApi {
  api: ApiProcess;
  db: TestDatabase;
  /** The folder of the test's own (`link`'s folder is `<dir>/mount`). */
  dir: string;
  /** The copy of the configuration (in `<dir>/data`). */
  file: string;
  /** MASTER_CONFIG: the symlink to `file`. */
  link: string;
  stop(): Promise<void>;
}

export async function startReloadableApi(name: string): Promise<ReloadableApi> {
  const dir = mkdtempSync(join(tmpdir(), `flotilla-${name}-`));
  for (const d of ['data', 'mount']) mkdirSync(join(dir, d));
  const file = join(dir, 'data', 'master.yaml');
  const link = join(dir, 'mount', 'master.yaml');
  writeFileSync(file, readFileSync(ORACLE_MASTER_YAML, 'utf8'));
  symlinkSync(file, link);
  const db = await createDatabase('migrated');
  let api: ApiProcess;
  try {
    api = await apiProcess({ databaseUrl: db.url, config: link, env: { LOG_LEVEL: 'info' } });
  } catch (err) {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    api,
    db,
    dir,
    file,
    link,
    async stop() {
      await api.stop();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The label the API answers for the oracle's force scheduler `force-runtests`. */
export async function runtestsLabel(api: ApiProcess): Promise<string> {
  const res = await fetch(`${api.base}/forceschedulers/force-runtests`);
  const body = (await res.json()) as { forceschedulers: { label: string }[] };
  return body.forceschedulers[0]!.label;
}

/** The configuration's hash on the API's probe port's /readyz. */
export async function probedHash(api: ApiProcess): Promise<string> {
  const ready = (await (await fetch(`${api.probes}/readyz`)).json()) as { config: { hash: string } };
  return ready.config.hash;
}
