// An API process re-reads its configuration file (issue 33 §3; services/api/reload.ts): on
// SIGHUP, it answers with the new force schedulers from the next request, and says the new
// hash on /readyz and /metrics; a bad file that arrives the way Kubernetes updates a mounted
// ConfigMap (its symlink swapped) is refused with the start's error, logged, and the old
// configuration keeps serving under its old hash. Both are in the audit log.
//
// MASTER_CONFIG is a symlink, in a folder of its own, to a file in another folder, as a mounted
// ConfigMap is: the file's edit before the SIGHUP changes nothing in the watched folder, so
// the SIGHUP alone reloads it; the symlink's swap changes the watched folder, and nothing else
// is sent.
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { waitFor } from '../helpers/wait.js';
import { type ApiProcess, startApiProcess } from './lib/api-process.js';
import { ORACLE_MASTER_YAML } from './lib/harness.js';

const OLD_LABEL = 'Force a runtests build';
const NEW_LABEL = 'Force runtests, as reloaded';

let db: TestDatabase;
let api: ApiProcess;
let dir: string;
let mounted: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-reload-'));
  mkdirSync(join(dir, 'data'));
  mkdirSync(join(dir, 'mount'));
  writeFileSync(join(dir, 'data', 'master.yaml'), readFileSync(ORACLE_MASTER_YAML, 'utf8'));
  mounted = join(dir, 'mount', 'master.yaml');
  symlinkSync(join(dir, 'data', 'master.yaml'), mounted);
  db = await createDatabase('migrated');
  api = await startApiProcess(db.url, { masterConfig: mounted, logLevel: 'info' });
}, 120_000);
afterAll(async () => {
  await api?.stop();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function runtestsLabel(): Promise<string> {
  const res = await fetch(`${api.base}/forceschedulers/force-runtests`);
  const body = (await res.json()) as { forceschedulers: { label: string }[] };
  return body.forceschedulers[0]!.label;
}

async function probes(): Promise<{ hash: string; metrics: string }> {
  const ready = (await (await fetch(`${api.probes}/readyz`)).json()) as { config: { hash: string } };
  const metrics = await (await fetch(`${api.probes}/metrics`)).text();
  return { hash: ready.config.hash, metrics };
}

async function audit(actor: string): Promise<{ outcome: string; args: Record<string, string> }[]> {
  return (await db.pool.query(sql`
    SELECT outcome, args FROM flotilla.audit_log WHERE actor = ${actor} ORDER BY id`)) as {
    outcome: string;
    args: Record<string, string>;
  }[];
}

describe('an API process whose configuration file changes', () => {
  let reloadedHash = '';

  it('runs the new configuration after SIGHUP, and says its hash', async () => {
    expect(await runtestsLabel()).toBe(OLD_LABEL);
    const before = await probes();
    const file = join(dir, 'data', 'master.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`label: ${OLD_LABEL}`, `label: ${NEW_LABEL}`));
    process.kill(api.pid, 'SIGHUP');
    await waitFor('the reloaded force scheduler', async () => (await runtestsLabel()) === NEW_LABEL, {
      proc: api.proc,
    });
    const after = await probes();
    expect(after.hash).not.toBe(before.hash);
    expect(after.metrics).toContain(`flotilla_config_info{hash="${after.hash}"} 1`);
    expect(after.metrics).not.toContain(before.hash);
    expect(await audit('SIGHUP')).toEqual([
      { outcome: 'success', args: { previous: before.hash, hash: after.hash } },
    ]);
    reloadedHash = after.hash;
  });

  it('refuses a bad file swapped in, logs why, and keeps serving the one it runs', async () => {
    expect(reloadedHash).not.toBe('');
    const bad = join(dir, 'data', 'bad.yaml');
    writeFileSync(bad, `${readFileSync(join(dir, 'data', 'master.yaml'), 'utf8')}\nnot_a_key: 1\n`);
    // The ConfigMap's way: a new symlink beside the old, renamed over it.
    symlinkSync(bad, join(dir, 'mount', '.master.yaml.new'));
    renameSync(join(dir, 'mount', '.master.yaml.new'), mounted);
    await waitFor('the refused reload logged', async () => api.proc.output().includes('reload refused'), {
      proc: api.proc,
    });
    const refusal = api.proc
      .output()
      .split('\n')
      .find((l) => l.includes('reload refused'))!;
    expect(JSON.parse(refusal)).toMatchObject({ code: 'CONFIG_SCHEMA', trigger: 'file', hash: reloadedHash });
    expect(refusal).toContain('not_a_key');
    expect(await runtestsLabel()).toBe(NEW_LABEL);
    expect((await probes()).hash).toBe(reloadedHash);
    expect(await audit('file')).toEqual([{ outcome: 'CONFIG_SCHEMA', args: { previous: reloadedHash } }]);
  });
});
