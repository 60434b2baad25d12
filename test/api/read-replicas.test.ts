// Reads from real streaming replicas (services/api/db-routing/replicas.ts): two replicas of the
// test cluster made with pg_basebackup, paused with pg_wal_replay_pause() to lag at will, and
// one killed by its pid. What is checked is what a client sees: the REST API's answers, the
// cookie a control action sets, and /readyz; the router's counters show where reads went.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAL_HEADER } from '../../services/api/db-routing/read-your-writes.js';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { lsnValue } from '../../services/core/data/replication.js';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { type Replica, startReplica } from '../helpers/pg-replica.js';
import { waitFor } from '../helpers/wait.js';
import { ApiUnderTest } from './lib/harness.js';

let db: TestDatabase;
let api: ApiUnderTest;
let replicas: Replica[] = [];
let app: FastifyInstance;

// How long a read that must see its client's write waits for a replica. Any value works; the
// tests only check what is answered, never how fast.
const WAIT_MS = 300;

beforeAll(async () => {
  db = await createDatabase('fixture');
  replicas = [await startReplica(), await startReplica()];
  api = await ApiUnderTest.on(db, {
    // Write notices on (as in production), with a bound generous for a loaded machine.
    www: masterConfigSchema.shape.www.parse({
      rate_limit: { enabled: false },
      page_cache: { max_staleness_ms: 500 },
    }),
    // A paused replica stays within the lag bound for the whole test: what is checked is
    // that read-your-writes and the page cache hold while it serves stale reads.
    // A monitor's probe that a loaded machine holds up for seconds must not count as a lost
    // replica here (reads would go to the primary); killed replicas refuse at once.
    readReplicas: {
      urls: replicas.map((r) => r.url(db.name)),
      waitMs: WAIT_MS,
      maxLagMs: 3_600_000,
      probeDeadlineMs: 120_000,
    },
  });
  app = api.app;
  // Each replica is a pg_basebackup of the whole test cluster, every other file's databases
  // included: beside a full suite and two CPU hogs (2026-11-28 02:14) both were not up after
  // 60 s. Only a test that fails waits the limit out.
  await waitFor('both replicas to take reads', async () => (await readyz()).body.reads?.up === 2, {
    timeoutMs: 200_000,
  });
}, 400_000);

afterAll(async () => {
  await api?.stop();
  await Promise.all(replicas.map((r) => r.stop()));
  await db?.drop();
});

async function readyz() {
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  return { status: res.statusCode, body: res.json() };
}

function details() {
  return app.probes.details().reads as {
    from: string;
    replicas: { name: string; state: string; reads: number; replayed: string | null; error: string | null }[];
    primaryReads: number;
    waited: number;
  };
}

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v2${path}`,
    headers: { accept: 'application/json', ...headers },
  });
  return { status: res.statusCode, body: res.statusCode === 200 ? res.json() : res.body };
}

const pauseAll = () => Promise.all(replicas.map((r) => r.pause()));
const resumeAll = async () => {
  await Promise.all(replicas.map((r) => r.resume()));
  await Promise.all(replicas.map((r) => r.caughtUp()));
};

async function description(builderid: number): Promise<string | null> {
  return (await get(`/builders/${builderid}`)).body.builders[0].description;
}

/** A force, as a client sends it: its answer carries the write's position. */
const force = () =>
  app.inject({
    method: 'POST',
    url: '/api/v2/forceschedulers/force-runtests',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', method: 'force', id: 1, params: { builderid: 4 } }),
  });

/**
 * Reads twice: true when the second was a kept page. (The first is kept only once the router
 * has seen a replica replay past the page's noticed writes, a moment after they replay.)
 */
async function keptAfterRead(read: () => Promise<unknown>): Promise<boolean> {
  await read();
  const before = (await lookups()).hit!;
  await read();
  return (await lookups()).hit === before + 1;
}

async function lookups() {
  const body = (await app.probes.metrics()).body;
  const out: Record<string, number> = { hit: 0, miss: 0, expired: 0 };
  for (const m of body.matchAll(/^flotilla_page_cache_lookups_total\{outcome="(\w+)"\} (\d+)/gm)) {
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

describe('reads from replicas', () => {
  it('go to the replicas, which lag while paused', async () => {
    const before = details().replicas.reduce((n, r) => n + r.reads, 0);
    await pauseAll();
    try {
      await db.pool.query(sql`UPDATE builders SET description = 'while paused' WHERE id = 1`);
      // Nothing here waits for the write: the replicas answer, without it.
      expect(await description(1)).not.toBe('while paused');
    } finally {
      await resumeAll();
    }
    expect(await description(1)).toBe('while paused');
    expect(details().replicas.reduce((n, r) => n + r.reads, 0)).toBeGreaterThan(before);
  });
});

describe('read-your-writes', () => {
  it('a client that forces a build reads its request back, through lagging replicas', async () => {
    await pauseAll();
    try {
      const forced = await force();
      expect(forced.statusCode).toBe(200);
      const [bsid, brids] = forced.json().result as [number, Record<string, number>];
      const brid = Object.values(brids)[0]!;
      const cookie = [forced.headers['set-cookie']]
        .flat()
        .find((c) => c?.startsWith('flotilla_wal='))!
        .split(';')[0]!;
      expect(cookie).toMatch(/^flotilla_wal=[0-9A-F]+\/[0-9A-F]+$/);
      expect(forced.headers[WAL_HEADER]).toBe(cookie.slice('flotilla_wal='.length));

      // Without the write's position: a paused replica answers, and has no such build set.
      expect((await get(`/buildsets/${bsid}`)).status).toBe(404);
      // With it (cookie or header), the read waits for a replica, then goes to the primary.
      const waited = details().waited;
      const viaCookie = await get(`/buildsets/${bsid}`, { cookie: `session=x; ${cookie}` });
      expect(viaCookie.status).toBe(200);
      expect(viaCookie.body.buildsets[0].bsid).toBe(bsid);
      const viaHeader = await get(`/buildrequests/${brid}`, {
        [WAL_HEADER]: forced.headers[WAL_HEADER] as string,
      });
      expect(viaHeader.status).toBe(200);
      expect(viaHeader.body.buildrequests[0].buildsetid).toBe(bsid);
      expect(details().waited).toBeGreaterThanOrEqual(waited + 2);
    } finally {
      await resumeAll();
    }
  });

  it('once a replica has the write, reads that carry it go to the replica', async () => {
    const forced = await force();
    expect(forced.statusCode).toBe(200);
    const [bsid] = forced.json().result as [number];
    const position = lsnValue(forced.headers[WAL_HEADER] as string);
    await waitFor('the router to see both replicas replay the write', () =>
      details().replicas.every((r) => r.replayed !== null && lsnValue(r.replayed) >= position),
    );
    const toReplicas = details().replicas.reduce((n, r) => n + r.reads, 0);
    const got = await get(`/buildsets/${bsid}`, { [WAL_HEADER]: forced.headers[WAL_HEADER] as string });
    expect(got.status).toBe(200);
    expect(details().replicas.reduce((n, r) => n + r.reads, 0)).toBe(toReplicas + 1);
  });

  it('an unreadable position is as none', async () => {
    for (const v of ['', 'nope', '1/2/3', 'FFFFFFFFF/0']) {
      expect((await get('/builders/1', { [WAL_HEADER]: v })).status).toBe(200);
    }
  });
});

describe('the page cache on replicas', () => {
  it('keeps no page a paused replica read after a write it had not replayed', async () => {
    // A page read while the replicas are current is kept (a hit the second time).
    await Promise.all(replicas.map((r) => r.caughtUp()));
    await waitFor('a page read from current replicas to be kept', () => keptAfterRead(() => description(2)));

    await pauseAll();
    try {
      await db.pool.query(sql`UPDATE builders SET description = 'written on the primary' WHERE id = 2`);
      // The notice expires the kept page; the replicas, paused, still answer the old row.
      await waitFor('the write notice to expire the kept page', async () => {
        const before = await lookups();
        await description(2);
        return (await lookups()).hit === before.hit;
      });
      const l = await lookups();
      for (let i = 0; i < 3; i++) await description(2);
      // Read from a replica that has not replayed the noticed write: never kept, never a hit.
      expect((await lookups()).hit).toBe(l.hit!);
    } finally {
      await resumeAll();
    }
    // A stale page kept meanwhile would be served now, with no write left to expire it.
    expect(await description(2)).toBe('written on the primary');
  });

  it('a client that wrote does not get a kept page from before its write', async () => {
    await Promise.all(replicas.map((r) => r.caughtUp()));
    const newest = '/buildsets?order=-bsid&limit=1';
    await waitFor('the page to be kept', () => keptAfterRead(() => get(newest)));
    await pauseAll();
    try {
      const res = await force();
      const [bsid] = res.json().result as [number];
      const position = res.headers[WAL_HEADER] as string;
      const got = await get(newest, { [WAL_HEADER]: position });
      expect(got.body.buildsets[0].bsid).toBe(bsid);
    } finally {
      await resumeAll();
    }
  });
});

describe('a lost replica', () => {
  it('moves reads to the other replica, then to the primary, and /readyz says so', async () => {
    await replicas[0]!.kill();
    // Reads keep being answered, whichever replica each was sent to.
    for (let i = 0; i < 4; i++) expect((await get('/builders/1')).status).toBe(200);
    await waitFor('/readyz to count one replica up', async () => (await readyz()).body.reads.up === 1);
    expect(await readyz()).toEqual({
      status: 200,
      body: { status: 'ready', reads: { from: 'replicas', replicas: 2, up: 1 } },
    });
    expect(details().replicas.map((r) => r.state)).toEqual(['down', 'up']);
    const onSecond = details().replicas[1]!.reads;
    for (let i = 0; i < 3; i++) expect((await get(`/builds?limit=${i + 1}`)).status).toBe(200);
    expect(details().replicas[1]!.reads).toBe(onSecond + 3);

    await replicas[1]!.kill();
    for (let i = 0; i < 4; i++) expect((await get(`/builders?limit=${i + 1}`)).status).toBe(200);
    await waitFor(
      '/readyz to say reads go to the primary',
      async () => (await readyz()).body.reads.from === 'primary',
    );
    expect(await readyz()).toEqual({
      status: 200,
      body: { status: 'ready', reads: { from: 'primary', replicas: 2, up: 0 } },
    });
    const primaryReads = details().primaryReads;
    // A URL not read before: no kept page answers it.
    expect((await get('/builders/1?field=name')).status).toBe(200);
    expect(details().primaryReads).toBe(primaryReads + 1);
  });
});
