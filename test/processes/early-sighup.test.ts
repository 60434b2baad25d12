// A SIGHUP an API process gets before it has a reloader (services/core/config/reload.ts,
// holdEarlySighup): Node ends a process on a signal nobody listens to, so `npm run reload` at
// the wrong moment, or a rollout's signal, killed an API that was starting. Held, it is given
// to the reloader once there is one; an API with no configuration file keeps ignoring it.
//
// "While it starts" is a state the test waits for, not a moment it guesses: the process
// catches SIGHUP (/proc/PID/status, SigCgt) and does not yet answer /readyz.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { type ApiProcess, apiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { masterYaml } from '../helpers/master-config.js';
import { status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let dir: string;
const apis: ApiProcess[] = [];

beforeAll(async () => {
  db = await createDatabase('migrated');
  dir = mkdtempSync(join(tmpdir(), 'early-sighup-'));
}, 60_000);
afterAll(async () => {
  for (const api of apis) await api.stop();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether the process has a handler for SIGHUP (signal 1: the lowest bit of SigCgt). */
function catchesSighup(pid: number): boolean {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('SigCgt:'));
  return line !== undefined && (BigInt(`0x${line.slice('SigCgt:'.length).trim()}`) & 1n) === 1n;
}

const ready = async (api: ApiProcess) => (await status(`${api.origin}/readyz`).catch(() => 0)) === 200;
const alive = (api: ApiProcess) => api.proc.child.exitCode === null && api.proc.child.signalCode === null;

it('keeps starting after a SIGHUP that comes while it starts, then reloads', async () => {
  const config = join(dir, 'master.yaml');
  writeFileSync(config, masterYaml());
  const api = await apiProcess({ databaseUrl: db.url, config, ready: false });
  apis.push(api);
  await waitFor(
    'the API to catch SIGHUP before it is ready',
    async () => catchesSighup(api.pid) && !(await ready(api)),
    { proc: api.proc },
  );
  process.kill(api.pid, 'SIGHUP');
  await waitFor('the API to be ready', () => ready(api), { proc: api.proc });
  expect(alive(api)).toBe(true);
  // Given to the reloader once it was there: a SIGHUP reload, in the audit log.
  await waitFor('the held SIGHUP to be reloaded', async () => {
    const rows = await db.pool.query(sql`
      SELECT outcome FROM flotilla.audit_log WHERE actor = 'SIGHUP' AND path = ${config}`);
    return rows.length === 1;
  });
});

it('ignores a SIGHUP when it has no configuration file to reload', async () => {
  const api = await apiProcess({ databaseUrl: db.url });
  apis.push(api);
  process.kill(api.pid, 'SIGHUP');
  await waitFor(
    'the API to say it has nothing to reload',
    () => api.proc.output().includes('no configuration file to reload'),
    { proc: api.proc },
  );
  expect(alive(api)).toBe(true);
  expect(await ready(api)).toBe(true);
});
