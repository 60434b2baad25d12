// Several masters on one database and one Redis: each scheduler runs on exactly one of them,
// and requests added all at once are each claimed, and built, exactly once. The race at
// 1,000 requests is a benchmark (load/claims); four in-process masters race for 200 in
// test/master/distributor.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMasterConfig } from '../../services/core/config/master-config.js';
import { configVersion } from '../../services/core/config/version.js';
import { addBuildset, transact } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { createRedis } from '../../services/core/redis.js';
import { sample } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster } from './cluster.js';

let c: Cluster;
beforeAll(async () => {
  c = await Cluster.start();
  for (const [i, name] of ['m1', 'm2', 'm3'].entries()) {
    const m = await c.startMaster(name);
    await c.startWorker(`q${2 * i + 1}`, m);
    await c.startWorker(`q${2 * i + 2}`, m);
  }
});
afterAll(async () => {
  await c?.stop();
});

describe('three masters', () => {
  it('own every scheduler exactly once', async () => {
    let schedulers: any[] = [];
    await waitFor('every scheduler to have a master', async () => {
      schedulers = (await c.get('/schedulers')).schedulers;
      return schedulers.length >= 8 && schedulers.every((s) => s.master !== null);
    });
    const [row] = await c.db.pool.query(sql`
      SELECT count(*)::int AS owned, count(DISTINCT schedulerid)::int AS distinct_owned FROM scheduler_masters`);
    expect(row.owned).toBe(row.distinct_owned);
    expect(row.owned).toBe(schedulers.length);
    const masters = (await c.get('/masters?active=true')).masters.map((m: any) => m.masterid);
    for (const s of schedulers) expect(masters).toContain(s.master.masterid);
  });

  // More than the 48 slots of the six workers, so that the masters race for the rest as
  // builds finish; every master runs some.
  const REQUESTS = 120;

  // Issue 33, section 3: which configuration each process runs, for a rollout to be seen.
  it('say which configuration they run, as the API does: its hash and load time, on /readyz and /metrics', async () => {
    const expected = configVersion(loadMasterConfig(c.config)).hash;
    const probes = [...c.masters.map((m) => m.probePort), c.api.probePort];
    for (const port of probes) {
      const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
        config: { hash: string; loaded_at: number };
      };
      expect(ready.config.hash).toBe(expected);
      expect(ready.config.loaded_at).toBeGreaterThan(1_700_000_000);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(sample(metrics, 'flotilla_config_info', { hash: expected })).toBe(1);
      expect(sample(metrics, 'flotilla_config_loaded_timestamp_seconds', {})).toBe(ready.config.loaded_at);
    }
  });

  it('claim requests added at once: each is claimed and built exactly once', async () => {
    const redis = createRedis(c.redis.url, 'e2e-masters');
    const builderid = (await c.get('/builders/quick')).builders[0].builderid;
    const brids: number[] = [];
    try {
      // One build set per request, added in bursts, as a busy scheduler would.
      for (let i = 0; i < REQUESTS; i += 40) {
        await transact({ db: c.db.pool, redis }, async (tx) => {
          for (let j = i; j < i + 40; j++) {
            const added = await addBuildset(tx, {
              scheduler: 'load',
              sourcestamps: [{ codebase: '', repository: '', branch: 'main', revision: `r${j}` }],
              reason: `load ${j}`,
              builderids: [builderid],
            });
            brids.push(added.brids[builderid]!);
          }
        });
      }
    } finally {
      redis.disconnect();
    }
    await waitFor(
      'every request to complete',
      async () => {
        const [r] = await c.db.pool.query(sql`
          SELECT count(*)::int AS n FROM buildrequests WHERE id = ANY(${brids}::int[]) AND complete = 1`);
        return r.n === REQUESTS;
      },
      { timeoutMs: 120_000, everyMs: 200 },
    );
    const [r] = await c.db.pool.query(sql`
      SELECT count(*)::int AS builds, count(DISTINCT b.buildrequestid)::int AS requests,
             count(DISTINCT b.masterid)::int AS masters,
             count(*) FILTER (WHERE b.results <> 0)::int AS not_ok
      FROM builds b WHERE b.buildrequestid = ANY(${brids}::int[])`);
    expect(r).toEqual({ builds: REQUESTS, requests: REQUESTS, masters: 3, not_ok: 0 });
    const [claims] = await c.db.pool.query(sql`
      SELECT count(*)::int AS n, count(DISTINCT brid)::int AS d FROM buildrequest_claims WHERE brid = ANY(${brids}::int[])`);
    expect(claims).toEqual({ n: REQUESTS, d: REQUESTS });
  });

  it('a clean SIGTERM of a master in the middle of the work leaves nothing claimed by it', async () => {
    const m3 = c.masters.find((m) => m.name === 'm3')!;
    const slow = (await c.get('/builders/quick')).builders[0];
    expect(slow).toBeDefined();
    expect(await m3.proc.stop('SIGTERM', 60_000)).toBe(0);
    const id = (await c.get('/masters?name=m3')).masters[0];
    expect(id.active).toBe(false);
    const [r] = await c.db.pool.query(sql`
      SELECT count(*)::int AS n FROM buildrequest_claims c JOIN buildrequests br ON br.id = c.brid
      WHERE c.masterid = ${id.masterid} AND br.complete = 0`);
    expect(r.n).toBe(0);
    // Its schedulers moved to the masters that remain.
    await waitFor('its schedulers to move', async () => {
      const s = (await c.get('/schedulers')).schedulers;
      return s.every((x: any) => x.master !== null && x.master.masterid !== id.masterid);
    });
  });
});
