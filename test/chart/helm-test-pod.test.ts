// The `helm test` pod's script, run here against a real API: it passes while the API is
// ready, and fails once the API is not (Redis gone).
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { type Running, startRedis, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, render } from './lib/helm.js';
import { named } from './lib/objects.js';

let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;
let api: Running;
let base: string;

beforeAll(async () => {
  ensureHelm();
  db = await createDatabase('migrated');
  redis = await startRedis();
  const started = await apiProcess({ databaseUrl: db.url, redisUrl: redis.url });
  api = started.proc;
  base = started.origin;
}, FETCH_TIMEOUT_MS);

afterAll(async () => {
  await api?.stop('SIGKILL');
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
});

describe('the helm test pod', () => {
  const container = () => named(render([CI_VALUES[1]!]), 'Pod', 'flotilla-prod-test-api').spec.containers[0];
  const run = () => {
    const [command, ...args] = container().command as string[];
    expect(command).toBe('node');
    return spawnSync(process.execPath, args, { env: { API_URL: base }, encoding: 'utf8', timeout: 30_000 });
  };

  it('asks the API Service for /api/v2 and /readyz', () => {
    expect(container().env).toEqual([{ name: 'API_URL', value: 'http://flotilla-prod-api:80' }]);
  });

  it('passes against a ready API, and fails once it is not', async () => {
    const ok = run();
    expect(ok.stdout).toBe('/api/v2: 200\n/readyz: 200\n');
    expect(ok.status).toBe(0);
    await redis.proc.stop('SIGKILL');
    await waitFor('api not ready', async () => (await status(`${base}/readyz`)) === 503, { proc: api });
    const failed = run();
    expect(failed.stdout).toBe('/api/v2: 200\n/readyz: 503\n');
    expect(failed.status).toBe(1);
  });
});
