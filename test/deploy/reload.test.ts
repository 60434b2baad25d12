// npm run reload (deploy/local/reload.ts) against a real API process laid out as `npm start`
// lays one out: its pid in run/api.pid, its log in logs/api.log. The script signals it, reads
// its answer from the log and says it: the new configuration's hash, or the refusal and its
// problems with exit code 1; a running master is named as not reloaded, never signalled (its
// pid file here names this test's own process, which a SIGHUP would end).
//
// The configuration is a symlink to a file in another folder, so that editing the file does
// not also reach the API through its watch of the configuration's folder: the SIGHUP alone
// reloads it (test/api/config-reload.test.ts tests the watch).
import { execFile } from 'node:child_process';
import {
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from '../api/lib/api-process.js';
import { ORACLE_MASTER_YAML } from '../api/lib/harness.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

const run = promisify(execFile);

let db: TestDatabase;
let api: ApiProcess;
let dir: string;
let data: string;
let file: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-npm-reload-'));
  data = join(dir, 'local');
  for (const d of ['run', 'logs']) mkdirSync(join(data, d), { recursive: true });
  file = join(dir, 'files', 'master.yaml');
  mkdirSync(join(dir, 'files'));
  writeFileSync(file, readFileSync(ORACLE_MASTER_YAML, 'utf8'));
  symlinkSync(file, join(data, 'master.yaml'));
  db = await createDatabase('migrated');
  api = await startApiProcess(db.url, { masterConfig: join(data, 'master.yaml'), logLevel: 'info' });
  api.proc.child.stdout!.pipe(createWriteStream(join(data, 'logs', 'api.log')));
  writeFileSync(join(data, 'run', 'api.pid'), `${api.pid}\n`);
  writeFileSync(join(data, 'run', 'master.pid'), `${process.pid}\n`);
}, 120_000);
afterAll(async () => {
  await api?.stop();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function reload(): Promise<{ stdout: string; code: number }> {
  try {
    const r = await run(process.execPath, ['deploy/local/reload.ts'], {
      env: { ...process.env, FLOTILLA_DATA: data },
    });
    return { stdout: r.stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; code: number };
    return { stdout: e.stdout, code: e.code };
  }
}

async function probesHash(): Promise<string> {
  return ((await (await fetch(`${api.probes}/readyz`)).json()) as { config: { hash: string } }).config.hash;
}

describe('npm run reload', () => {
  it('reloads the API, says the hash it runs, and names the master it cannot reload', async () => {
    const before = await probesHash();
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('label: Force a runtests build', 'label: Reloaded'),
    );
    const r = await reload();
    const after = await probesHash();
    expect(after).not.toBe(before);
    expect(r.stdout).toContain(`api (pid ${api.pid}): reloaded, runs configuration ${after} (was ${before})`);
    expect(r.stdout).toContain(`master (pid ${process.pid}): masters do not reload yet`);
    expect(r.code).toBe(0);
    const res = await fetch(`${api.base}/forceschedulers/force-runtests`);
    expect(((await res.json()) as { forceschedulers: { label: string }[] }).forceschedulers[0]!.label).toBe(
      'Reloaded',
    );
  });

  it('says why the API refused a bad file, and exits 1', async () => {
    const before = await probesHash();
    writeFileSync(file, `${readFileSync(file, 'utf8')}\nnot_a_key: 1\n`);
    const r = await reload();
    expect(r.stdout).toContain(
      `api (pid ${api.pid}): refused the file and runs the one it had (CONFIG_SCHEMA):`,
    );
    expect(r.stdout).toContain('not_a_key');
    expect(r.code).toBe(1);
    expect(await probesHash()).toBe(before);
  });
});
