// Buildbot keys that mean nothing to Flotilla (issue 31 §2) are accepted, and a master names
// each one it was given at start: one structured warning per key, with the key and why it is
// ignored. The warnings come before the master needs its database, so none is given here:
// the test reads them and stops the process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort, type Running, startService } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'ignored-keys-'));
let master: Running | undefined;
afterAll(async () => {
  await master?.stop('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

it('a master logs each ignored Buildbot key with why, and goes on starting', async () => {
  const config = join(dir, 'master.yaml');
  writeFileSync(
    config,
    'buildbotNetUsageData: null\ntitleURL: https://buildbot.net/\nwww: { port: "tcp:8010", plugins: {} }\n',
  );
  master = startService('master', {
    DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none',
    REDIS_URL: 'redis://127.0.0.1:1',
    MASTER_CONFIG: config,
    MASTER_NAME: 'ignored-keys',
    PROBE_PORT: String(await freePort()),
    WORKER_PORT: String(await freePort()),
  });
  const warnings = () =>
    master!
      .output()
      .split('\n')
      .filter((l) => l.includes('CONFIG_KEY_IGNORED'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  await waitFor('the warnings', async () => warnings().length === 4, { proc: master });
  expect(warnings().map((w) => [w.level, w.key])).toEqual([
    [40, 'buildbotNetUsageData'],
    [40, 'titleURL'],
    [40, 'www.port'],
    [40, 'www.plugins'],
  ]);
  for (const w of warnings()) expect(w.msg).toBe(`${w.key} is ignored: ${w.reason}`);
  // Accepted: no configuration error follows.
  expect(master.output()).not.toMatch(/CONFIG_SCHEMA|is invalid/);
});
