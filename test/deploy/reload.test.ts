// npm run reload (deploy/local/reload.ts) against a real API and a real master laid out as
// `npm start` lays them out: their pids in run/, their logs in logs/. The script signals each,
// reads its answer from its log and says it: the new configuration's hash (and for the master,
// the sections it took on), or the refusal and its problems with exit code 1.
//
// The configuration is laid out as a mounted ConfigMap is (test/api/lib/reloadable-api.ts):
// editing the file does not also reach the API through its watch of the configuration's
// folder, so the SIGHUP alone reloads it (test/api/config-reload.test.ts tests the watch).
import { execFile } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  probedHash,
  type ReloadableApi,
  runtestsLabel,
  startReloadableApi,
} from '../api/lib/reloadable-api.js';
import { freePort, type Running, startRedis, startService, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);

let r: ReloadableApi;
let data: string;
let master: Running;
let masterProbe: number;
let redis: Awaited<ReturnType<typeof startRedis>>;
beforeAll(async () => {
  r = await startReloadableApi('npm-reload');
  // A Redis of its own: a master runs the cluster's jobs on the one it is given.
  redis = await startRedis();
  masterProbe = await freePort();
  master = startService('master', {
    DATABASE_URL: r.db.url,
    REDIS_URL: redis.url,
    MASTER_CONFIG: r.link,
    MASTER_NAME: 'npm-reload',
    PROBE_PORT: String(masterProbe),
    WORKER_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  });
  await waitFor('the master', async () => (await status(`http://127.0.0.1:${masterProbe}/readyz`)) === 200, {
    proc: master,
  });
  // npm start's layout: the data folder's pid files, logs and configuration.
  data = join(r.dir, 'local');
  for (const d of ['run', 'logs']) mkdirSync(join(data, d), { recursive: true });
  symlinkSync(r.file, join(data, 'master.yaml'));
  r.api.proc.child.stdout!.pipe(createWriteStream(join(data, 'logs', 'api.log')));
  writeFileSync(join(data, 'run', 'api.pid'), `${r.api.pid}\n`);
  master.child.stdout!.pipe(createWriteStream(join(data, 'logs', 'master.log')));
  writeFileSync(join(data, 'run', 'master.pid'), `${master.pid}\n`);
}, 120_000);
afterAll(async () => {
  await master?.stop('SIGKILL');
  await redis?.proc.stop('SIGKILL');
  await r?.stop();
});

async function masterHash(): Promise<string> {
  const ready = (await (await fetch(`http://127.0.0.1:${masterProbe}/readyz`)).json()) as {
    config: { hash: string };
  };
  return ready.config.hash;
}

async function reload(): Promise<{ stdout: string; code: number }> {
  try {
    const done = await run(process.execPath, ['deploy/local/reload.ts'], {
      env: { ...process.env, FLOTILLA_DATA: data },
    });
    return { stdout: done.stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; code: number };
    return { stdout: e.stdout, code: e.code };
  }
}

describe('npm run reload', () => {
  it('reloads the API and the master, and says the hash each runs and what the master took on', async () => {
    const before = await probedHash(r.api);
    writeFileSync(
      r.file,
      readFileSync(r.file, 'utf8').replace('label: Force a runtests build', 'label: Reloaded'),
    );
    const out = await reload();
    const after = await probedHash(r.api);
    expect(after).not.toBe(before);
    expect(out.stdout).toContain(
      `api (pid ${r.api.pid}): reloaded, runs configuration ${after} (was ${before})`,
    );
    expect(await masterHash()).toBe(after);
    expect(out.stdout).toContain(
      `master (pid ${master.pid}): reloaded, runs configuration ${after} (was ${before}); took on: force_schedulers`,
    );
    expect(out.code).toBe(0);
    expect(await runtestsLabel(r.api)).toBe('Reloaded');
  });

  it('says why each refused a bad file, and exits 1', async () => {
    const before = await probedHash(r.api);
    writeFileSync(r.file, `${readFileSync(r.file, 'utf8')}\nnot_a_key: 1\n`);
    const out = await reload();
    expect(out.stdout).toContain(
      `api (pid ${r.api.pid}): refused the file and runs the one it had (CONFIG_SCHEMA):`,
    );
    expect(out.stdout).toContain(
      `master (pid ${master.pid}): refused the file and runs the one it had (CONFIG_SCHEMA):`,
    );
    expect(out.stdout).toContain('not_a_key');
    expect(await masterHash()).toBe(before);
    expect(out.code).toBe(1);
    expect(await probedHash(r.api)).toBe(before);
  });
});
