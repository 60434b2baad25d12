// An API process re-reads its configuration file (issue 33 §3; services/core/config/reload.ts): on
// SIGHUP, it answers with the new force schedulers from the next request, and says the new
// hash on /readyz and /metrics; a bad file that arrives the way Kubernetes updates a mounted
// ConfigMap (its symlink swapped) is refused with the start's error, logged, and the old
// configuration keeps serving under its old hash. Both are in the audit log.
//
// The configuration is laid out as a mounted ConfigMap is (lib/reloadable-api.ts): the file's
// edit before the SIGHUP changes nothing in the watched folder, so the SIGHUP alone reloads
// it; the symlink's swap changes the watched folder, and nothing else is sent.
import { readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/wait.js';
import { probedHash, type ReloadableApi, runtestsLabel, startReloadableApi } from './lib/reloadable-api.js';

const OLD_LABEL = 'Force a runtests build';
const NEW_LABEL = 'Force runtests, as reloaded';

let r: ReloadableApi;
beforeAll(async () => {
  r = await startReloadableApi('reload');
}, 120_000);
afterAll(async () => {
  await r?.stop();
});

async function probes(): Promise<{ hash: string; metrics: string }> {
  const metrics = await (await fetch(`${r.api.probes}/metrics`)).text();
  return { hash: await probedHash(r.api), metrics };
}

async function audit(actor: string): Promise<{ outcome: string; args: Record<string, string> }[]> {
  return (await r.db.pool.query(sql`
    SELECT outcome, args FROM flotilla.audit_log WHERE actor = ${actor} ORDER BY id`)) as {
    outcome: string;
    args: Record<string, string>;
  }[];
}

describe('an API process whose configuration file changes', () => {
  let reloadedHash = '';

  it('runs the new configuration after SIGHUP, and says its hash', async () => {
    expect(await runtestsLabel(r.api)).toBe(OLD_LABEL);
    const before = await probes();
    writeFileSync(r.file, readFileSync(r.file, 'utf8').replace(`label: ${OLD_LABEL}`, `label: ${NEW_LABEL}`));
    process.kill(r.api.pid, 'SIGHUP');
    await waitFor('the reloaded force scheduler', async () => (await runtestsLabel(r.api)) === NEW_LABEL, {
      proc: r.api.proc,
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
    const bad = join(r.dir, 'data', 'bad.yaml');
    writeFileSync(bad, `${readFileSync(r.file, 'utf8')}\nnot_a_key: 1\n`);
    // The ConfigMap's way: a new symlink beside the old, renamed over it.
    symlinkSync(bad, join(r.dir, 'mount', '.master.yaml.new'));
    renameSync(join(r.dir, 'mount', '.master.yaml.new'), r.link);
    await waitFor('the refused reload logged', async () => r.api.proc.output().includes('reload refused'), {
      proc: r.api.proc,
    });
    const refusal = r.api.proc
      .output()
      .split('\n')
      .find((l) => l.includes('reload refused'))!;
    expect(JSON.parse(refusal)).toMatchObject({ code: 'CONFIG_SCHEMA', trigger: 'file', hash: reloadedHash });
    expect(refusal).toContain('not_a_key');
    expect(await runtestsLabel(r.api)).toBe(NEW_LABEL);
    expect((await probes()).hash).toBe(reloadedHash);
    expect(await audit('file')).toEqual([{ outcome: 'CONFIG_SCHEMA', args: { previous: reloadedHash } }]);
  });
});
