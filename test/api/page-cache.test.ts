// The page cache (services/api/read/page-cache.ts) on the real read path: a page is served
// again only while nothing it was read from has been written, by anyone. Writes here are
// plain SQL, as a Buildbot master sharing the database would make them, to tables the page
// reads directly and to tables it only embeds. A second API on the same database, without the
// cache, is the reference every cached answer must equal.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/http/server.js';
import { plainReader } from '../../services/api/query/read-pool.js';
import { WriteVersionsSource } from '../../services/api/query/versions.js';
import { PageCache } from '../../services/api/read/page-cache.js';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { sql } from '../../services/core/db/pool.js';
import { createRedis, type Redis } from '../../services/core/redis.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { testEnv } from '../helpers/env.js';
import { ApiUnderTest, oracleForceSchedulers, PUBLIC_URL } from './lib/harness.js';

let api: ApiUnderTest;
let reference: FastifyInstance;
let redis: Redis;

beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  redis = createRedis(testEnv().redisUrl, 'page-cache-test');
  redis.on('error', () => {});
  const www = masterConfigSchema.shape.www.parse({
    rate_limit: { enabled: false },
    page_cache: { enabled: false },
  });
  reference = await buildApp({
    db: api.db.pool,
    redis,
    log: createLogger('test', 'silent'),
    publicUrl: PUBLIC_URL,
    databaseUrl: api.db.url,
    forceSchedulers: oracleForceSchedulers(),
    www,
  });
  await reference.ready();
});
afterAll(async () => {
  await reference?.close();
  redis?.disconnect();
  await api?.close();
});

interface Lookups {
  hit: number;
  miss: number;
  expired: number;
}

async function lookups(app: FastifyInstance = api.app): Promise<Lookups> {
  const body = (await app.probes.metrics()).body;
  const out: Lookups = { hit: 0, miss: 0, expired: 0 };
  for (const m of body.matchAll(/^flotilla_page_cache_lookups_total\{outcome="(\w+)"\} (\d+)/gm)) {
    out[m[1] as keyof Lookups] = Number(m[2]);
  }
  return out;
}

/** GET through the cached API, checked against the uncached reference. */
async function same(path: string, accept = 'application/json') {
  const url = `/api/v2${path}`;
  const [got, want] = await Promise.all([
    api.app.inject({ method: 'GET', url, headers: { accept } }),
    reference.inject({ method: 'GET', url, headers: { accept } }),
  ]);
  expect({ path, status: got.statusCode, body: got.body }).toEqual({
    path,
    status: want.statusCode,
    body: want.body,
  });
  expect(got.headers.etag).toBe(want.headers.etag);
  expect(got.headers.link).toBe(want.headers.link);
  return got;
}

const q = <T = any>(query: ReturnType<typeof sql>) => api.db.pool.query(query) as Promise<T[]>;

describe('the page cache', () => {
  it('serves a page again while its tables are unchanged, and reads it afresh after a write', async () => {
    const [b] = await q(sql`SELECT max(id) AS id FROM builds`);
    const path = '/builds?order=-buildid&limit=2';
    const before = await lookups();
    const first = await same(path);
    const second = await same(path);
    expect(second.body).toBe(first.body);
    let now = await lookups();
    expect(now.hit - before.hit).toBe(1);

    await q(sql`UPDATE builds SET state_string = 'changed behind our back' WHERE id = ${b.id}`);
    const third = await same(path);
    expect(third.body).toContain('changed behind our back');
    now = await lookups();
    expect(now.expired - before.expired).toBe(1);
  });

  it('notices writes to tables a page only embeds', async () => {
    const [b] = await q(sql`SELECT max(id) AS id FROM builds`);
    const [c] = await q(sql`SELECT max(changeid) AS id FROM changes`);
    const [br] = await q(sql`SELECT max(id) AS id FROM buildrequests`);
    const pages = [
      `/builds/${b.id}?property=*`,
      `/builds/${b.id}/properties`,
      '/changes?limit=3',
      `/changes/${c.id}`,
      `/buildrequests/${br.id}`,
      '/buildrequests?claimed=false',
      '/buildrequests?claimed=true&limit=2',
      '/workers',
      '/builders',
      '/masters',
    ];
    const writes = [
      sql`INSERT INTO build_properties (buildid, name, value, source)
          VALUES (${b.id}, 'cache_probe', '"1"', 'test')`,
      sql`UPDATE build_properties SET value = '"2"' WHERE buildid = ${b.id} AND name = 'cache_probe'`,
      sql`UPDATE sourcestamps SET revision = 'cafe' || id WHERE id IN (SELECT sourcestampid FROM changes WHERE changeid = ${c.id})`,
      sql`INSERT INTO change_properties (changeid, property_name, property_value)
          VALUES (${c.id}, 'cache_probe', '["x", "Change"]')`,
      sql`DELETE FROM buildrequest_claims WHERE brid = ${br.id}`,
      sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
          SELECT ${br.id}, id, 1700000000 FROM masters ORDER BY id LIMIT 1`,
      sql`UPDATE workers SET info = '{"host": "elsewhere"}'`,
      sql`INSERT INTO tags (name, name_hash) VALUES ('cache-probe', md5('cache-probe'))`,
      sql`INSERT INTO builders_tags (builderid, tagid)
          SELECT (SELECT min(id) FROM builders), id FROM tags WHERE name = 'cache-probe'`,
      sql`UPDATE masters SET last_active = last_active + 1`,
    ];
    for (const p of pages) await same(p);
    for (const w of writes) {
      await q(w);
      for (const p of pages) await same(p);
    }
    expect((await lookups()).hit).toBeGreaterThan(0);
  });

  it('keeps pages across count compaction, which changes no version', async () => {
    const path = '/buildsets?limit=2';
    await same(path);
    await q(sql`INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, state_string)
                SELECT 1000 + number, builderid, buildrequestid, workerid, masterid, started_at, 'x'
                FROM builds ORDER BY id LIMIT 1`);
    await q(sql`SELECT flotilla.compact_counts()`);
    const before = await lookups();
    await same(path);
    expect((await lookups()).hit - before.hit).toBe(1);
  });

  it('keeps the text and JSON forms apart, answers 304 and HEAD from a kept page', async () => {
    const path = '/builders';
    const json = await same(path);
    const text = await same(path, 'text/html');
    expect(text.body).not.toBe(json.body);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    const again = await same(path, 'text/html');
    expect(again.headers.etag).toBe(text.headers.etag);
    const cond = await api.app.inject({
      method: 'GET',
      url: `/api/v2${path}`,
      headers: { accept: 'application/json', 'if-none-match': String(json.headers.etag) },
    });
    expect(cond.statusCode).toBe(304);
    const head = await api.app.inject({
      method: 'HEAD',
      url: `/api/v2${path}`,
      headers: { accept: 'application/json' },
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(json.headers.etag);
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(json.body));
  });

  it('never keeps an error', async () => {
    const before = await lookups();
    for (const p of ['/builds/99999999', '/builds/99999999', '/builds?limit=x', '/builds?limit=x'])
      await same(p);
    expect((await lookups()).hit).toBe(before.hit);
  });

  it('keeps the contents of a finished log until its chunks change, and never those of an open one', async () => {
    const [log] = await q(sql`SELECT max(logid) AS id FROM logchunks WHERE compressed = 0`);
    const path = `/logs/${log.id}/contents`;
    let before = await lookups();
    await same(path);
    await same(path);
    expect((await lookups()).hit - before.hit).toBe(1);
    await q(sql`UPDATE logchunks SET content = 'rewritten' || content WHERE logid = ${log.id}`);
    expect((await same(path)).body).toContain('rewritten');

    await q(sql`UPDATE logs SET complete = 0 WHERE id = ${log.id}`);
    before = await lookups();
    await same(path);
    await same(path);
    expect((await lookups()).hit).toBe(before.hit);
  });

  it('stays equal to the uncached API under writes racing the reads', async () => {
    const paths = [
      '/builds?limit=5&order=-buildid',
      '/buildrequests?complete=false',
      '/buildsets?limit=5',
      '/steps?limit=5',
    ];
    const [b] = await q(sql`SELECT max(id) AS id FROM builds`);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await q(sql`UPDATE builds SET state_string = ${`racing ${i}`} WHERE id = ${b.id}`);
        await q(
          sql`UPDATE buildsets SET reason = ${`racing ${i}`} WHERE id = (SELECT max(id) FROM buildsets)`,
        );
      }
    })();
    for (let round = 0; round < 30; round++) {
      await Promise.all(
        paths.map((p) =>
          api.app.inject({ method: 'GET', url: `/api/v2${p}`, headers: { accept: 'application/json' } }),
        ),
      );
    }
    writing = false;
    await writer;
    for (const p of paths) await same(p);
  });
});

describe('the page store', () => {
  const page = (body: string) => ({
    tables: ['builds'],
    version: '1',
    body,
    contentType: 'x',
    etag: '"e"',
    link: null,
    mark: -1,
  });

  it('is bounded by bytes, least recently stored first out, and keeps no page too big for it', () => {
    const store = new PageCache(
      plainReader(api.db.pool),
      new WriteVersionsSource(plainReader(api.db.pool)),
      64 * 1024,
    );
    for (let i = 0; i < 40; i++) store.store(`k${i}`, page('x'.repeat(2000)));
    const s = store.stats();
    expect(s.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(s.pages).toBeGreaterThan(20);
    expect(s.pages).toBeLessThan(40);
    store.store('huge', page('x'.repeat(8 * 1024)));
    expect(store.stats().pages).toBe(s.pages);
  });

  it('answers a kept page only while the version is the same', async () => {
    const reads = plainReader(api.db.pool);
    const store = new PageCache(reads, new WriteVersionsSource(reads), 1024 * 1024);
    const [v] =
      await q(sql`SELECT coalesce(sum(n), 0) AS n, extract(epoch FROM pg_postmaster_start_time())::text AS t
                            FROM flotilla.count_deltas WHERE scope = '~w' AND tbl = 'builds'`);
    store.store('now', { ...page('a'), version: `${v.n}@${v.t}` });
    store.store('old', { ...page('b'), version: `${Number(v.n) - 1}@${v.t}` });
    store.store('restarted', { ...page('c'), version: `${v.n}@0` });
    expect((await store.lookup('now'))?.body).toBe('a');
    expect(await store.lookup('old')).toBeNull();
    expect(await store.lookup('old')).toBeNull();
    expect(await store.lookup('restarted')).toBeNull();
    expect(store.stats()).toMatchObject({ hits: 1, expired: 2, misses: 1, pages: 1 });
  });
});
