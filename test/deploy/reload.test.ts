// npm run reload (deploy/local/reload.ts) against a real API process laid out as `npm start`
// lays one out: its pid in run/api.pid, its log in logs/api.log. The script signals it, reads
// its answer from the log and says it: the new configuration's hash, or the refusal and its
// problems with exit code 1; a running master is named as not reloaded, never signalled (its
// pid file here names this test's own process, which a SIGHUP would end).
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

const run = promisify(execFile);

let r: ReloadableApi;
let data: string;
beforeAll(async () => {
  r = await startReloadableApi('npm-reload');
  // npm start's layout: the data folder's pid files, logs and configuration.
  data = join(r.dir, 'local');
  for (const d of ['run', 'logs']) mkdirSync(join(data, d), { recursive: true });
  symlinkSync(r.file, join(data, 'master.yaml'));
  r.api.proc.child.stdout!.pipe(createWriteStream(join(data, 'logs', 'api.log')));
  writeFileSync(join(data, 'run', 'api.pid'), `${r.api.pid}\n`);
  writeFileSync(join(data, 'run', 'master.pid'), `${process.pid}\n`);
}, 120_000);
afterAll(async () => {
  await r?.stop();
});

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
  it('reloads the API, says the hash it runs, and names the master it cannot reload', async () => {
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
    expect(out.stdout).toContain(`master (pid ${process.pid}): masters do not reload yet`);
    expect(out.code).toBe(0);
    expect(await runtestsLabel(r.api)).toBe('Reloaded');
  });

  it('says why the API refused a bad file, and exits 1', async () => {
    const before = await probedHash(r.api);
    writeFileSync(r.file, `${readFileSync(r.file, 'utf8')}\nnot_a_key: 1\n`);
    const out = await reload();
    expect(out.stdout).toContain(
      `api (pid ${r.api.pid}): refused the file and runs the one it had (CONFIG_SCHEMA):`,
    );
    expect(out.stdout).toContain('not_a_key');
    expect(out.code).toBe(1);
    expect(await probedHash(r.api)).toBe(before);
  });
});
