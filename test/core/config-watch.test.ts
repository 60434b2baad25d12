// The watch on a configuration file (services/core/config/reload.ts), in the process of the
// test: a process reads its file, answers /readyz, and only then begins to watch; a change made
// in between must still be reloaded. A first look that finds the file as the process started
// reloads and records nothing; a reload that failed for a reason other than the file is tried
// again at the folder's next change, even though the file's text is the same; a folder never
// quiet (another file written again and again) does not put a change off for ever; a reload
// whose parts did not all restart is recorded as incomplete.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMasterConfig } from '../../services/core/config/master-config.js';
import { type ConfigReloader, watchConfigFile } from '../../services/core/config/reload.js';
import { type ConfigVersion, configVersion } from '../../services/core/config/version.js';
import { sql } from '../../services/core/db/pool.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { masterYaml } from '../helpers/master-config.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let dir: string;
const log = createLogger('test', 'silent');
const watchers: ConfigReloader[] = [];

beforeAll(async () => {
  db = await createDatabase('migrated');
  dir = mkdtempSync(join(tmpdir(), 'flotilla-watch-'));
}, 60_000);
afterAll(async () => {
  for (const w of watchers) w.stop();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const yamlOf = (title: string) => masterYaml({ title });

/** A file in a folder of its own, and the version its text loads as. */
function fileWith(name: string, yaml: string): { path: string; version: ConfigVersion } {
  const folder = join(dir, name);
  rmSync(folder, { recursive: true, force: true });
  const path = join(folder, 'master.yaml');
  mkdirSync(folder);
  writeFileSync(path, yaml);
  return { path, version: configVersion(loadMasterConfig(path)) };
}

/**
 * Watches `path` as a process that runs `running` does. `fail`: the next applies throw;
 * `notRestarted`: what the next apply says did not restart; `startedFrom`: the text the process
 * started from.
 */
function watchAs(
  path: string,
  running: ConfigVersion,
  opts: { fail?: { times: number }; notRestarted?: string[]; startedFrom?: string } = {},
) {
  const { fail = { times: 0 }, notRestarted = [], startedFrom } = opts;
  let current = running;
  const applied: string[] = [];
  let loads = 0;
  watchers.push(
    watchConfigFile({
      path,
      log,
      db: db.pool,
      current: () => current,
      ...(startedFrom === undefined ? {} : { startedFrom }),
      load: (p) => {
        loads++;
        return loadMasterConfig(p);
      },
      async apply(_config, version) {
        if (fail.times > 0) {
          fail.times -= 1;
          throw new Error('the database went away');
        }
        applied.push(version.hash);
        current = version;
        return notRestarted.length ? { changed: [], notRestarted } : undefined;
      },
    }),
  );
  return { applied, current: () => current, loads: () => loads };
}

async function audited(path: string): Promise<string[]> {
  const rows = (await db.pool.query(sql`
    SELECT outcome FROM flotilla.audit_log WHERE path = ${path} ORDER BY id`)) as { outcome: string }[];
  return rows.map((r) => r.outcome);
}

describe('the watch on a configuration file', () => {
  it('reloads a change made after the process read its file and before the watch began', async () => {
    const started = fileWith('between', yamlOf('as started')).version;
    const { path, version: changed } = fileWith('between', yamlOf('changed before the watch'));
    const w = watchAs(path, started);
    await waitFor('the change to be reloaded', () => w.current().hash === changed.hash);
    expect(w.applied).toEqual([changed.hash]);
    await waitFor('the reload to be audited', async () => (await audited(path)).length === 1);
    expect(await audited(path)).toEqual(['success']);
  });

  it('reloads and records nothing at its first look when the file is as the process started', async () => {
    const { path, version } = fileWith('same', yamlOf('unchanged'));
    const w = watchAs(path, version);
    // The first look is the queue's first reload: a SIGHUP queued after it sees what it left,
    // and the only row of the audit log is the SIGHUP's.
    await watchers.at(-1)!.reload('SIGHUP');
    expect(w.applied).toEqual([version.hash]);
    expect(await audited(path)).toEqual(['success']);
  });

  it('parses nothing at its first look when the file holds the text the process started from (issue 35)', async () => {
    const yaml = yamlOf('started from');
    const { path, version } = fileWith('started-from', yaml);
    const w = watchAs(path, version, { startedFrom: yaml });
    await watchers.at(-1)!.reload('SIGHUP');
    // The SIGHUP's read only: the first look, queued before it, compared texts.
    expect(w.loads()).toBe(1);
    expect(await audited(path)).toEqual(['success']);
  });

  it('reloads a change made before the watch when it was given the text the process started from', async () => {
    const yaml = yamlOf('as started, text given');
    const started = fileWith('between-text', yaml).version;
    const { path, version: changed } = fileWith('between-text', yamlOf('changed, text given'));
    const w = watchAs(path, started, { startedFrom: yaml });
    await waitFor('the change to be reloaded', () => w.current().hash === changed.hash);
    expect(w.applied).toEqual([changed.hash]);
  });

  it('tries again at the next change of the folder when a reload failed for another reason', async () => {
    const started = fileWith('retry', yamlOf('as started')).version;
    const { path, version: changed } = fileWith('retry', yamlOf('changed'));
    const fail = { times: 1 };
    const w = watchAs(path, started, { fail });
    await waitFor('the failed reload to be audited', async () => (await audited(path)).length === 1);
    expect(await audited(path)).toEqual(['RELOAD_FAILED']);
    expect(w.current().hash).toBe(started.hash);
    // Another file of the folder: the text of master.yaml is the same, and is tried again.
    writeFileSync(join(path, '..', 'other'), 'x');
    await waitFor('the retried reload to be audited', async () => (await audited(path)).length === 2);
    expect(await audited(path)).toEqual(['RELOAD_FAILED', 'success']);
    expect(w.current().hash).toBe(changed.hash);
  });

  it('reloads a change while another file of the folder is written again and again', async () => {
    const { path, version: started } = fileWith('busy', yamlOf('as started'));
    const w = watchAs(path, started);
    const other = join(path, '..', 'other');
    let writes = 0;
    const busy = setInterval(() => writeFileSync(other, String(++writes)), 50);
    try {
      // Busy well before the change: the watch's first look has seen the file as it started.
      await waitFor('the folder to be busy', () => writes >= 20);
      const { version: changed } = fileWith('busy-next', yamlOf('changed while busy'));
      writeFileSync(path, yamlOf('changed while busy'));
      await waitFor(
        'the change to be reloaded while the folder is busy',
        () => w.current().hash === changed.hash,
      );
    } finally {
      clearInterval(busy);
    }
  });

  it('records a reload whose parts did not all restart as incomplete, running the new file', async () => {
    const started = fileWith('incomplete', yamlOf('as started')).version;
    const { path, version: changed } = fileWith('incomplete', yamlOf('changed'));
    const w = watchAs(path, started, { notRestarted: ['reporters'] });
    await waitFor('the reload to be audited', async () => (await audited(path)).length === 1);
    expect(await audited(path)).toEqual(['RELOAD_INCOMPLETE']);
    expect(w.current().hash).toBe(changed.hash);
  });
});
