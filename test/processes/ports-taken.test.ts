// A port a process cannot have is a start-up error like the others (issue 28): the master
// whose worker port was taken died of an unhandled EADDRINUSE stack trace. Now every port a
// master or an API pod listens on, and a worker's probe port, taken by another process, ends
// the start with exit 2 and one log line naming the address and the setting that moves it,
// without a stack trace; a master leaves the cluster as it joined it.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { apiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { testEnv } from '../helpers/env.js';
import { freePort, type Running, startService } from '../helpers/processes.js';

let db: TestDatabase;
let config: string;
const running: Running[] = [];
const held: Server[] = [];

beforeAll(async () => {
  db = await createDatabase('migrated');
  config = join(mkdtempSync(join(tmpdir(), 'ports-taken-')), 'master.yaml');
  writeFileSync(
    config,
    'workers: [{ name: w1, password: p }]\nprotocols: { msgpack_experimental_v7: { port: 0 } }\n',
  );
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  await db?.drop();
});

/** A free port, now held by this process. */
async function takenPort(): Promise<number> {
  const port = await freePort();
  const s = createServer();
  held.push(s);
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve());
  });
  return port;
}

/** Exit 2 with one fatal line that names the address and the setting, and no stack trace. */
async function expectRefusal(proc: Running, port: number, setting: string) {
  expect(await proc.exited, proc.output()).toBe(2);
  const lines = proc.output().trim().split('\n');
  const fatal = lines.filter((l) => l.includes('"level":60'));
  expect(fatal).toHaveLength(1);
  expect(JSON.parse(fatal[0]!)).toMatchObject({ code: 'CONFIG_LISTEN' });
  expect(JSON.parse(fatal[0]!).msg).toContain(`127.0.0.1:${port} (${setting}): the port is in use`);
  // Every line is a log line: no stack trace, no unhandled rejection printed by Node.
  for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow();
  expect(proc.output()).not.toMatch(/\n\s+at /);
}

async function masterWith(env: Record<string, string>): Promise<{ proc: Running; name: string }> {
  const name = `ports-${running.length}`;
  const proc = startService('master', {
    DATABASE_URL: db.url,
    REDIS_URL: testEnv().redisUrl,
    MASTER_CONFIG: config,
    MASTER_NAME: name,
    PROBE_PORT: String(await freePort()),
    WORKER_PORT: String(await freePort()),
    ...env,
  });
  running.push(proc);
  return { proc, name };
}

const activeMasters = async (name: string) =>
  (await db.pool.query(sql`SELECT active FROM masters WHERE name = ${name}`)).map((r) => r.active);

describe('a master', () => {
  it('whose worker port is taken says which port and WORKER_PORT, and leaves the cluster', async () => {
    const port = await takenPort();
    const { proc, name } = await masterWith({ WORKER_PORT: String(port) });
    await expectRefusal(proc, port, 'WORKER_PORT');
    // It had joined the cluster; it left it, so its next start waits for no previous life.
    expect(await activeMasters(name)).toEqual([0]);
  });

  it('whose msgpack port is taken names MSGPACK_WORKER_PORT', async () => {
    const port = await takenPort();
    const { proc } = await masterWith({ MSGPACK_WORKER_PORT: String(port) });
    await expectRefusal(proc, port, 'MSGPACK_WORKER_PORT');
  });

  it('whose probe port is taken names PROBE_PORT, before joining the cluster', async () => {
    const port = await takenPort();
    const { proc, name } = await masterWith({ PROBE_PORT: String(port) });
    await expectRefusal(proc, port, 'PROBE_PORT');
    expect(await activeMasters(name)).toEqual([]);
  });
});

describe('an API pod', () => {
  const api = async (env: Record<string, string>) => {
    const { proc } = await apiProcess({ databaseUrl: db.url, env, ready: false });
    running.push(proc);
    return proc;
  };

  it('whose public port or probe port is taken names PORT or PROBE_PORT', async () => {
    const [publicPort, probePort] = [await takenPort(), await takenPort()];
    const [onPublic, onProbe] = await Promise.all([
      api({ PORT: String(publicPort) }),
      api({ PROBE_PORT: String(probePort) }),
    ]);
    await expectRefusal(onPublic, publicPort, 'PORT');
    await expectRefusal(onProbe, probePort, 'PROBE_PORT');
  });
});

describe('a worker', () => {
  it('whose probe port is taken names PROBE_PORT, before connecting', async () => {
    const port = await takenPort();
    const proc = startService(
      'worker',
      {
        MASTER_URL: `ws://127.0.0.1:${await freePort()}/worker`,
        WORKER_NAME: 'w1',
        PROBE_PORT: String(port),
      },
      { input: 'p\n' },
    );
    running.push(proc);
    await expectRefusal(proc, port, 'PROBE_PORT');
  });
});
