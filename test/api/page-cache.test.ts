// The page cache (services/api/cache/page-cache.ts) on the real read path: a page is served
// again only while nothing it was read from has been written, by anyone. Writes here are
// plain SQL, as a Buildbot master sharing the database would make them, to tables the page
// reads directly and to tables it only embeds. A second API on the same database, without the
// cache, is the reference every cached answer must equal.
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PageCache } from '../../services/api/cache/page-cache.js';
import { statementText, WriteVersionsSource } from '../../services/api/cache/versions.js';
import { plainReader } from '../../services/api/db-routing/read-pool.js';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { sql } from '../../services/core/db/pool.js';
import { apiInProcess, type InProcessApi } from '../helpers/api.js';
import { waitFor } from '../helpers/wait.js';
import { ApiUnderTest, oracleForceSchedulers, PUBLIC_URL } from './lib/harness.js';

let api: ApiUnderTest;
let reference: InProcessApi;

/** An API without the page cache on the database of `of`: what every cached answer must equal. */
function uncached(of: ApiUnderTest): Promise<InProcessApi> {
  const www = masterConfigSchema.shape.www.parse({
    rate_limit: { enabled: false },
    page_cache: { enabled: false },
  });
  return apiInProcess({ db: of.db, publicUrl: PUBLIC_URL, forceSchedulers: oracleForceSchedulers(), www });
}

beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  reference = await uncached(api);
});
afterAll(async () => {
  await reference?.stop();
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
async function same(path: string, accept = 'application/json', cached = api.app, ref = reference.app) {
  const url = `/api/v2${path}`;
  const [got, want] = await Promise.all([
    cached.inject({ method: 'GET', url, headers: { accept } }),
    ref.inject({ method: 'GET', url, headers: { accept } }),
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

// Finer than a table (migration 0016, services/api/read/page-keys.ts): on write notices, a
// page that reads one part of a busy table (a build's steps, a builder's finished builds) is
// kept across writes to other parts, and expires on a write to its own.
describe('the page cache on write notices, part by part', () => {
  let live: ApiUnderTest;
  let ref: InProcessApi;

  /** A cached API on write notices with this bound, and its uncached reference. */
  async function start(stalenessMs: number): Promise<void> {
    live = await ApiUnderTest.start('fixture', {
      www: masterConfigSchema.shape.www.parse({
        rate_limit: { enabled: false },
        page_cache: { max_staleness_ms: stalenessMs },
      }),
    });
    ref = await uncached(live);
  }
  afterEach(async () => {
    await ref?.stop();
    await live?.close();
  });

  const w = <T = any>(query: ReturnType<typeof sql>) => live.db.pool.query(query) as Promise<T[]>;
  const check = (path: string) => same(path, 'application/json', live.app, ref.app);

  /** Until the notices hold every write committed before this call (a fence sent after it returned). */
  async function caughtUp(): Promise<void> {
    const since = performance.now();
    await waitFor('write notices caught up', async () => {
      const body = (await live.app.probes.metrics()).body;
      const lag = Number(body.match(/^flotilla_write_notices_lag_seconds (\S+)$/m)?.[1] ?? -1);
      return lag >= 0 && performance.now() - lag * 1000 > since;
    });
  }

  /** What names a log through its step, build and builder (a path by numbers or names). */
  const logsThroughSteps = (where: ReturnType<typeof sql>) =>
    w<{
      id: number;
      slug: string;
      stepid: number;
      step_number: number;
      step_name: string;
      buildid: number;
      number: number;
      builderid: number;
      buildername: string;
    }>(sql`SELECT l.id, l.slug, s.id AS stepid, s.number AS step_number, s.name AS step_name,
                  b.id AS buildid, b.number, b.builderid, bl.name AS buildername
           FROM logs l JOIN steps s ON s.id = l.stepid JOIN builds b ON b.id = s.buildid
                JOIN builders bl ON bl.id = b.builderid
           WHERE ${where} ORDER BY l.id`);
  /** Names a path may hold where an identifier goes (i: in a pattern). */
  const IDENTIFIER = /^[a-zA-Z_-][a-zA-Z0-9_-]*$/;

  let seq = 0;
  const newStep = (buildid: number) => {
    seq++;
    return sql`INSERT INTO steps (number, name, buildid, started_at, state_string, urls_json, hidden)
               VALUES (${1000 + seq}, ${`probe ${seq}`}, ${buildid}, 1795304000, 'running', '[]', 0)`;
  };

  it("keeps a finished build's steps and a builder's finished builds while another build of the builder runs", async () => {
    // Generous for a loaded machine: a kept page is checked with the database instead while
    // the newest fence is older than this, and a check of a busy table expires it.
    await start(2000);
    // Two builds of the builder with the most: `old` finished, `running` made to run again.
    const [{ builderid }] = await w(
      sql`SELECT builderid FROM builds GROUP BY builderid ORDER BY count(*) DESC, builderid LIMIT 1`,
    );
    const builds = await w<{ id: number; number: number }>(
      sql`SELECT id, number FROM builds WHERE builderid = ${builderid} ORDER BY id`,
    );
    const old = builds[0]!.id;
    const running = builds[builds.length - 1]!.id;
    await w(sql`UPDATE builds SET complete_at = NULL, results = NULL WHERE id = ${running}`);
    // `old` by builder and number as well: its own row, as by id.
    const byNumber = `/builders/${builderid}/builds/${builds[0]!.number}`;
    const pages = [
      `/builds/${old}/steps`,
      `/builders/${builderid}/builds?complete=true&limit=2&offset=4`,
      `${byNumber}/steps`,
      `${byNumber}?property=*`,
    ];
    await caughtUp();
    for (const p of pages) await check(p);

    // What a master writes as a step starts: the step, and the build's state.
    await w(newStep(running));
    await w(sql`UPDATE builds SET state_string = 'running probe' WHERE id = ${running}`);
    await caughtUp();
    const before = await lookups(live.app);
    for (const p of pages) await check(p);
    let now = await lookups(live.app);
    expect({ hit: now.hit - before.hit, expired: now.expired - before.expired }).toEqual({
      hit: 4,
      expired: 0,
    });
    // Its own part is written: a step in `old`; `running` finishes, and joins the finished.
    // The build's own page stays (neither its row nor its properties were written).
    await w(newStep(old));
    await w(sql`UPDATE builds SET complete_at = 1795304001, results = 0 WHERE id = ${running}`);
    await caughtUp();
    for (const p of pages) await check(p);
    now = await lookups(live.app);
    expect({ hit: now.hit - before.hit, expired: now.expired - before.expired }).toEqual({
      hit: 5,
      expired: 3,
    });
  });

  it("keeps a log's pages named through its step across another build's log writes, and expires them on its own", async () => {
    await start(2000);
    // Logs with stored lines, named by identifiers all the way (builder, step, slug), in
    // two different builds: `mine`, whose pages are read, and `other`, a build running.
    const ident = IDENTIFIER.source;
    const logs = await logsThroughSteps(
      sql`s.name ~ ${ident} AND bl.name ~ ${ident} AND l.slug ~ ${ident}
          AND EXISTS (SELECT 1 FROM logchunks c WHERE c.logid = l.id)`,
    );
    const mine = logs[0]!;
    const other = logs.find((l) => l.buildid !== mine.buildid)!;
    expect(other).toBeDefined();
    // Finished, so that its lines are kept too (an open log's come from its live stream).
    await w(sql`UPDATE logs SET complete = 1 WHERE id = ${mine.id}`);
    const step = `/builders/${mine.builderid}/builds/${mine.number}/steps/${mine.step_number}`;
    const pages = [
      `${step}/logs`,
      `${step}/logs/${mine.slug}`,
      `/builders/${mine.buildername}/builds/${mine.number}/steps/${mine.step_name}/logs/${mine.slug}`,
      `${step}/logs/${mine.slug}/contents`,
      `/builds/${mine.buildid}/steps/${mine.step_name}/logs/${mine.slug}/contents?offset=0&limit=5`,
      `/steps/${mine.stepid}/logs/${mine.slug}/contents`,
    ];
    await caughtUp();
    for (const p of pages) await check(p);

    // What a running build writes: lines of its log, a new log, a new step, its state.
    await w(sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
                SELECT ${other.id}, num_lines, num_lines, convert_to('other line
', 'UTF8'), 0
                FROM logs WHERE id = ${other.id}`);
    await w(sql`UPDATE logs SET num_lines = num_lines + 1 WHERE id = ${other.id}`);
    await w(sql`INSERT INTO logs (name, slug, stepid, complete, num_lines, type)
                VALUES ('probe', ${`probe${++seq}`}, ${other.stepid}, 0, 0, 's')`);
    await w(newStep(other.buildid));
    await w(sql`UPDATE builds SET state_string = 'running probe' WHERE id = ${other.buildid}`);
    await caughtUp();
    const before = await lookups(live.app);
    for (const p of pages) await check(p);
    let now = await lookups(live.app);
    expect({ hit: now.hit - before.hit, expired: now.expired - before.expired }).toEqual({
      hit: 6,
      expired: 0,
    });

    // A new log in its step: the step's list of logs only.
    await w(sql`INSERT INTO logs (name, slug, stepid, complete, num_lines, type)
                VALUES ('probe', ${`probe${++seq}`}, ${mine.stepid}, 1, 0, 's')`);
    await caughtUp();
    for (const p of pages) await check(p);
    now = await lookups(live.app);
    expect({ hit: now.hit - before.hit, expired: now.expired - before.expired }).toEqual({
      hit: 11,
      expired: 1,
    });

    // Its own log is written: every page of it.
    await w(sql`UPDATE logs SET name = 'renamed probe' WHERE id = ${mine.id}`);
    await caughtUp();
    for (const p of pages) await check(p);
    now = await lookups(live.app);
    expect({ hit: now.hit - before.hit, expired: now.expired - before.expired }).toEqual({
      hit: 11,
      expired: 7,
    });
  });

  it('serves every page as a fresh read would, under random writes to parts and reads of them', async () => {
    // Short, so that notices catch up quickly; a late fence only means more checked hits.
    await start(150);
    const builders = (
      await w<{ builderid: number }>(
        sql`SELECT builderid FROM builds GROUP BY builderid ORDER BY count(*) DESC, builderid LIMIT 2`,
      )
    ).map((r) => r.builderid);
    const builds = await w<{ id: number; builderid: number; number: number }>(
      sql`SELECT id, builderid, number FROM builds WHERE builderid = ANY(${builders}::int[]) ORDER BY id LIMIT 8`,
    );
    const buildIds = builds.map((b) => b.id);
    const names = new Map(
      (
        await w<{ id: number; name: string }>(
          sql`SELECT id, name FROM builders WHERE id = ANY(${builders}::int[])`,
        )
      ).map((r) => [r.id, r.name]),
    );
    const steps = (
      await w<{ id: number }>(
        sql`SELECT id FROM steps WHERE buildid = ANY(${buildIds}::int[]) ORDER BY id LIMIT 6`,
      )
    ).map((r) => r.id);
    // Logs whose chunks are stored plain, so that a write can change their text.
    const logs = (
      await w<{ id: number }>(sql`SELECT DISTINCT l.id FROM logs l JOIN logchunks c ON c.logid = l.id
                                  WHERE c.compressed = 0 ORDER BY l.id LIMIT 4`)
    ).map((r) => r.id);
    // The same logs named through their steps: by builder and number, by name, by build id.
    const logPaths = (await logsThroughSteps(sql`l.id = ANY(${logs}::int[])`)).flatMap((l) => {
      const step = `/builders/${l.builderid}/builds/${l.number}/steps/${l.step_number}/logs`;
      const named = [l.buildername, l.step_name, l.slug].every((x) => IDENTIFIER.test(x));
      return [
        step,
        `${step}/${l.slug}`,
        `${step}/${l.slug}/contents?offset=1&limit=2`,
        `/builds/${l.buildid}/steps/${l.step_number}/logs/${l.slug}/contents`,
        `/steps/${l.stepid}/logs/${l.slug}/contents`,
        ...(named
          ? [
              `/builders/${l.buildername}/builds/${l.number}/steps/${l.step_name}/logs/${l.slug}`,
              `/builds/${l.buildid}/steps/${l.step_name}/logs/${l.slug}`,
            ]
          : []),
      ];
    });
    const logSteps = [...new Set(logPaths.map((p) => Number(p.match(/^\/steps\/(\d+)\//)?.[1])))].filter(
      (x) => x > 0,
    );
    expect(builders).toHaveLength(2);
    expect(builds.length).toBeGreaterThanOrEqual(4);
    expect(logSteps.length).toBeGreaterThanOrEqual(1);
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(logs.length).toBeGreaterThanOrEqual(2);

    const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
    const writeSql = fc.oneof(
      pick(buildIds).map((b) => newStep(b)),
      fc
        .tuple(pick(steps), fc.nat(99))
        .map(([s, v]) => sql`UPDATE steps SET state_string = ${`s ${v}`} WHERE id = ${s}`),
      fc
        .tuple(pick(buildIds), fc.nat(99))
        .map(([b, v]) => sql`UPDATE builds SET state_string = ${`b ${v}`} WHERE id = ${b}`),
      // A build finishes, or runs again.
      pick(buildIds).map(
        (b) => sql`UPDATE builds SET complete_at = CASE WHEN complete_at IS NULL THEN 1795304002 END,
                     results = CASE WHEN complete_at IS NULL THEN 2 END WHERE id = ${b}`,
      ),
      // A build moves to the other builder: it leaves one part and joins another.
      pick(buildIds).map(
        (b) => sql`WITH t AS (SELECT CASE WHEN builderid = ${builders[0]!} THEN ${builders[1]!}::int
                                         ELSE ${builders[0]!}::int END AS x FROM builds WHERE id = ${b})
                   UPDATE builds SET builderid = t.x,
                     number = (SELECT max(number) + 1 FROM builds WHERE builderid = t.x)
                   FROM t WHERE id = ${b}`,
      ),
      pick(builders).map(
        (
          x,
        ) => sql`INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, state_string)
                   SELECT (SELECT max(number) + 1 FROM builds WHERE builderid = ${x}), ${x}, buildrequestid, workerid,
                          masterid, started_at + 100, 'new' FROM builds WHERE id = ${buildIds[0]!}`,
      ),
      fc.tuple(pick(buildIds), fc.nat(1000)).map(
        ([b, n]) => sql`INSERT INTO build_properties (buildid, name, value, source)
                        VALUES (${b}, ${`probe ${++seq}`}, ${JSON.stringify(n)}, 'test')`,
      ),
      pick(steps).map(
        (s) => sql`DELETE FROM steps WHERE id = (SELECT max(id) FROM steps
                                   WHERE name LIKE 'probe %' AND buildid = (SELECT buildid FROM steps WHERE id = ${s}))`,
      ),
      pick(logs).map(
        (l) =>
          sql`UPDATE logchunks SET content = convert_to(${`line ${++seq}\n`}, 'UTF8') || content WHERE logid = ${l}`,
      ),
      pick(logs).map((l) => sql`UPDATE logs SET complete = 1 - complete WHERE id = ${l}`),
      // A log's step gets another log; a log's build moves to another builder (its paths by
      // builder and number then name another build, or none).
      pick(logSteps).map(
        (st) => sql`INSERT INTO logs (name, slug, stepid, complete, num_lines, type)
                    VALUES ('probe', ${`probe${++seq}`}, ${st}, 1, 0, 's')`,
      ),
      pick(logSteps).map(
        (st) => sql`WITH b AS (SELECT buildid AS id FROM steps WHERE id = ${st}),
                         t AS (SELECT CASE WHEN builderid = ${builders[0]!} THEN ${builders[1]!}::int
                                          ELSE ${builders[0]!}::int END AS x FROM builds WHERE id = (SELECT id FROM b))
                    UPDATE builds SET builderid = t.x,
                      number = (SELECT max(number) + 1 FROM builds WHERE builderid = t.x)
                    FROM t WHERE builds.id = (SELECT id FROM b)`,
      ),
    );
    // Printed as their SQL text when fast-check reports a counterexample.
    const write = writeSql.map((query) =>
      Object.assign(query, { [fc.toStringMethod]: () => JSON.stringify(statementText(query)) }),
    );
    const read = fc.oneof(
      pick(buildIds).map((b) => `/builds/${b}/steps`),
      pick(buildIds).map((b) => `/builds/${b}/steps/1`),
      pick(buildIds).map((b) => `/builds/${b}`),
      pick(buildIds).map((b) => `/builds/${b}?property=*`),
      pick(buildIds).map((b) => `/builds/${b}/properties`),
      fc
        .tuple(pick(builders), fc.boolean(), fc.nat(3))
        .map(([x, done, o]) => `/builders/${x}/builds?complete=${done}&limit=5&offset=${o}`),
      pick(builders).map((x) => `/builders/${x}/builds?order=-number&limit=3`),
      pick(builds).map((b) => `/builders/${b.builderid}/builds/${b.number}`),
      pick(builds).map((b) => `/builders/${b.builderid}/builds/${b.number}?property=*`),
      pick(builds).map((b) => `/builders/${b.builderid}/builds/${b.number}/steps`),
      pick(builds).map((b) => `/builders/${b.builderid}/builds/${b.number}/steps/1`),
      pick(builds).map((b) => `/builders/${names.get(b.builderid)}/builds/${b.number}`),
      pick(builds).map((b) => `/builders/${names.get(b.builderid)}/builds/${b.number}/steps`),
      fc.tuple(fc.boolean(), fc.nat(3)).map(([done, o]) => `/builds?complete=${done}&limit=5&offset=${o}`),
      pick(steps).map((s) => `/steps/${s}/logs`),
      pick(logs).map((l) => `/logs/${l}`),
      pick(logs).map((l) => `/logs/${l}/contents`),
      pick(logs).map((l) => `/logs/${l}/contents?offset=1&limit=2`),
      pick(logPaths),
    );
    // A round: some writes, the notices catch up with them, then reads, each checked.
    const round = fc.record({
      writes: fc.array(write, { maxLength: 3 }),
      reads: fc.array(read, { minLength: 1, maxLength: 10 }),
    });
    const before = await lookups(live.app);
    await fc.assert(
      fc.asyncProperty(fc.array(round, { minLength: 1, maxLength: 6 }), async (rounds) => {
        for (const r of rounds) {
          for (const q of r.writes) await w(q);
          if (r.writes.length) await caughtUp();
          for (const p of r.reads) await check(p);
        }
      }),
      { numRuns: 40, endOnFailure: true },
    );
    // The check was of kept pages too, not only of fresh reads.
    expect((await lookups(live.app)).hit).toBeGreaterThan(before.hit);
  });
});
