// Retention's deletes (core/data/retention.ts) and one run of the cleanup over them
// (services/master/jobs/retention.ts runRetention): each batch takes at most its limit;
// horizons act per kind, per builder and per tag; the maximum count per builder; running
// builds and unfinished requests are never touched; the kept totals stay exact; a deleted
// log reads as deleted through the REST API (test/api's real app).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RetentionConfig, retention } from '../../../services/core/config/master-config/retention.js';
import { addChange } from '../../../services/core/data/changes.js';
import {
  deleteBuildRequests,
  deleteBuilds,
  deletedLogsWithChunks,
  deleteLogChunks,
  markLogsDeleted,
} from '../../../services/core/data/retention.js';
import { type ConnectionPool, sql } from '../../../services/core/db/pool.js';
import { runRetention } from '../../../services/master/jobs/retention.js';
import { ApiUnderTest, collection } from '../../api/lib/harness.js';
import { keptTotals, trueTotals } from '../../helpers/counts.js';
import { type Harness, insertBuilder, openHarness, pendingRequests, uniq } from './harness.js';
import { DAY, type Made, makeBuild, nowS, tag } from './retention-builds.js';

const config = (c: Record<string, unknown>): RetentionConfig => retention.parse(c);

const count = async (db: ConnectionPool, query: ReturnType<typeof sql>): Promise<number> =>
  Number((await db.query(query))[0]!.n);

const chunksOf = (db: ConnectionPool, logid: number) =>
  count(db, sql`SELECT count(*) AS n FROM logchunks WHERE logid = ${logid}`);
const logType = async (db: ConnectionPool, logid: number) =>
  (await db.query(sql`SELECT type FROM logs WHERE id = ${logid}`))[0]?.type as string | undefined;
const buildExists = async (db: ConnectionPool, buildid: number) =>
  (await count(db, sql`SELECT count(*) AS n FROM builds WHERE id = ${buildid}`)) === 1;

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('each batch deletes at most its limit', () => {
  it('log chunks, marked logs, builds and requests', async () => {
    const builderid = await h.run((tx) => insertBuilder(tx));
    const made = await makeBuild(h, builderid, { ageDays: 10, chunks: 25 });
    const others = [
      await makeBuild(h, builderid, { ageDays: 10 }),
      await makeBuild(h, builderid, { ageDays: 10 }),
    ];
    const sel = { builderid, before: nowS(), upToId: 0 };
    // Chunks go only once their log is marked deleted, and builds only once their chunks have.
    expect(await h.db.pool.tx((q) => deleteLogChunks(q, [made.logid], 10))).toBe(0);
    expect(await h.db.pool.tx((q) => deleteBuilds(q, sel, 5))).toEqual([]);
    const marked1 = await h.db.pool.tx((q) => markLogsDeleted(q, sel, 2));
    expect(marked1).toEqual([made.logid, others[0]!.logid]);
    expect(await h.db.pool.tx((q) => markLogsDeleted(q, sel, 2))).toEqual([others[1]!.logid]);
    expect(await h.db.pool.tx((q) => markLogsDeleted(q, sel, 2))).toEqual([]);
    expect(await h.db.pool.tx((q) => deletedLogsWithChunks(q, 0, 2))).toEqual(marked1);
    const steps: number[] = [];
    for (let n = -1; n !== 0; steps.push(n))
      n = await h.db.pool.tx((q) => deleteLogChunks(q, [made.logid], 10));
    expect(steps).toEqual([10, 10, 5, 0]);
    // Several logs a statement, still at most the limit: 3 + 3 chunks in batches of 4.
    const two = [others[0]!.logid, others[1]!.logid];
    expect(await h.db.pool.tx((q) => deleteLogChunks(q, two, 4))).toBe(4);
    expect(await h.db.pool.tx((q) => deleteLogChunks(q, two, 4))).toBe(2);
    // A build goes only once its chunks are gone (tried first, above, it stayed).
    expect(await h.db.pool.tx((q) => deleteBuilds(q, sel, 1))).toEqual([made.buildid]);
    expect(await h.db.pool.tx((q) => deleteBuilds(q, sel, 5))).toEqual(others.map((o) => o.buildid));
    expect(await h.db.pool.tx((q) => deleteBuilds(q, sel, 5))).toEqual([]);
    expect(await h.db.pool.tx((q) => deleteBuildRequests(q, nowS(), 2))).toBe(2);
    expect(await h.db.pool.tx((q) => deleteBuildRequests(q, nowS(), 2))).toBe(1);
    await expect(deleteLogChunks(h.db.pool, [made.logid], 0)).rejects.toThrow(RangeError);
  });

  it('a run with a small batch size deletes all of many rows', async () => {
    const builderid = await h.run((tx) => insertBuilder(tx, uniq('many')));
    const builds: Made[] = [];
    for (let i = 0; i < 25; i++) builds.push(await makeBuild(h, builderid, { ageDays: 40, chunks: 12 }));
    const run = await runRetention(
      h.db.pool,
      config({ batch_size: 10, builders: { [await builderName(builderid)]: { build_horizon: '30d' } } }),
    );
    expect(run.finished).toBe(true);
    expect(run.deleted.builds).toBe(25);
    expect(run.deleted.log_chunks).toBe(25 * 12);
    expect(await h.db.pool.tx((q) => deletedLogsWithChunks(q, 0, 10))).toEqual([]);
    for (const b of builds) expect(await buildExists(h.db.pool, b.buildid)).toBe(false);
  });
});

async function builderName(id: number): Promise<string> {
  return (await h.db.pool.query(sql`SELECT name FROM builders WHERE id = ${id}`))[0]!.name;
}

describe('a run', () => {
  it('marks old logs deleted, per builder and per tag, and never touches a running build', async () => {
    const plain = await h.run((tx) => insertBuilder(tx));
    const kept = await h.run((tx) => insertBuilder(tx));
    const tagged = await h.run((tx) => insertBuilder(tx));
    const tagName = uniq('release');
    await tag(h, tagged, tagName);
    const old = await makeBuild(h, plain, { ageDays: 20 });
    const recent = await makeBuild(h, plain, { ageDays: 2 });
    const running = await makeBuild(h, plain, { ageDays: 20, running: true });
    const keptOld = await makeBuild(h, kept, { ageDays: 20 });
    const taggedOld = await makeBuild(h, tagged, { ageDays: 20 });
    const taggedOlder = await makeBuild(h, tagged, { ageDays: 70 });
    const rules = config({
      logHorizon: '7d',
      builders: { [await builderName(kept)]: { logHorizon: 'forever' } },
      tags: { [tagName]: { logHorizon: '60d' } },
    });
    const run = await runRetention(h.db.pool, rules);
    expect(run.finished).toBe(true);
    const db = h.db.pool;
    expect([await logType(db, old.logid), await chunksOf(db, old.logid)]).toEqual(['d', 0]);
    expect([await logType(db, taggedOlder.logid), await chunksOf(db, taggedOlder.logid)]).toEqual(['d', 0]);
    for (const m of [recent, running, keptOld, taggedOld])
      expect([await logType(db, m.logid), await chunksOf(db, m.logid)]).toEqual(['s', 3]);
    // The builds stay: only their logs were past the horizon.
    for (const m of [old, taggedOlder]) expect(await buildExists(db, m.buildid)).toBe(true);
    // Running to the end again finds nothing more.
    const again = await runRetention(db, rules);
    expect(again.deleted.logs).toBe(0);
  });

  it('keeps at most max_builds per builder, deleting only finished builds', async () => {
    const builderid = await h.run((tx) => insertBuilder(tx));
    const oldRunning = await makeBuild(h, builderid, { ageDays: 1, running: true });
    const rest: Made[] = [];
    for (let i = 0; i < 4; i++) rest.push(await makeBuild(h, builderid, { ageDays: 1 }));
    const run = await runRetention(
      h.db.pool,
      config({ builders: { [await builderName(builderid)]: { max_builds: 2 } } }),
    );
    expect(run.deleted.builds).toBe(2);
    const left = await h.db.pool.query(sql`SELECT id FROM builds WHERE builderid = ${builderid} ORDER BY id`);
    expect(left.map((r) => r.id)).toEqual([oldRunning.buildid, rest[2]!.buildid, rest[3]!.buildid]);
  });

  it('deletes builds past build_horizon with their artifacts; totals stay exact', async () => {
    const builderid = await h.run((tx) => insertBuilder(tx));
    const gone = await makeBuild(h, builderid, { ageDays: 100, artifact: true });
    const stays = await makeBuild(h, builderid, { ageDays: 10, artifact: true });
    const pending = await h.run((tx) => pendingRequests(tx, builderid, 1));
    await h.db.pool.query(sql`UPDATE buildrequests SET submitted_at = 0 WHERE id = ${pending[0]}`);
    const [goneObject] = await h.db.pool.query(
      sql`SELECT object FROM flotilla.artifacts WHERE buildid = ${gone.buildid}`,
    );
    const run = await runRetention(
      h.db.pool,
      config({ build_horizon: '90d', request_horizon: '30d', change_horizon: '30d' }),
    );
    expect(run.finished).toBe(true);
    expect(run.deleted.artifacts).toBeGreaterThanOrEqual(1);
    expect(run.deleted.artifact_bytes).toBeGreaterThanOrEqual(5000);
    const db = h.db.pool;
    expect(await buildExists(db, gone.buildid)).toBe(false);
    expect(await count(db, sql`SELECT count(*) AS n FROM steps WHERE buildid = ${gone.buildid}`)).toBe(0);
    expect(
      await count(
        db,
        sql`SELECT count(*) AS n FROM pg_largeobject_metadata WHERE oid = ${goneObject!.object}`,
      ),
    ).toBe(0);
    // Its request and build set, finished 100 days ago with no build left, went too.
    expect(await count(db, sql`SELECT count(*) AS n FROM buildrequests WHERE id = ${gone.brid}`)).toBe(0);
    expect(await buildExists(db, stays.buildid)).toBe(true);
    expect(
      await count(db, sql`SELECT count(*) AS n FROM flotilla.artifacts WHERE buildid = ${stays.buildid}`),
    ).toBe(1);
    // An unfinished request is never deleted, however old.
    expect(await count(db, sql`SELECT count(*) AS n FROM buildrequests WHERE id = ${pending[0]}`)).toBe(1);
    expect(await keptTotals(db)).toEqual(await trueTotals(db));
  });

  it('deletes changes past change_horizon', async () => {
    const change = (when: number) =>
      h.run((tx) =>
        addChange(tx, {
          author: 'a',
          files: ['f'],
          comments: 'c',
          revision: uniq('r'),
          when_timestamp: when,
          branch: 'main',
          category: null,
          revlink: null,
          properties: {},
          repository: 'r',
          codebase: '',
          project: 'p',
        }),
      );
    const old = await change(nowS() - 40 * DAY);
    const recent = await change(nowS() - DAY);
    const run = await runRetention(h.db.pool, config({ change_horizon: '30d' }));
    expect(run.deleted.changes).toBeGreaterThanOrEqual(1);
    const left = await h.db.pool.query(
      sql`SELECT changeid FROM changes WHERE changeid = ANY(${[old, recent]}::int[]) ORDER BY changeid`,
    );
    expect(left.map((r) => r.changeid)).toEqual([recent]);
    expect(await keptTotals(h.db.pool)).toEqual(await trueTotals(h.db.pool));
  });
});

describe('a deleted log through the REST API', () => {
  let api: ApiUnderTest;
  beforeAll(async () => {
    api = await ApiUnderTest.start('migrated');
  });
  afterAll(async () => {
    await api?.close();
  });

  it('keeps the build and its log, type d, with no lines', async () => {
    const db = api.db.pool;
    const at = nowS() - 30 * DAY;
    for (const q of [
      sql`INSERT INTO masters (id, name, name_hash, active, last_active) VALUES (1, 'm', md5('m'), 1, 0)`,
      sql`INSERT INTO builders (id, name, name_hash) VALUES (1, 'b', md5('b'))`,
      sql`INSERT INTO buildsets (id, reason, submitted_at, complete, complete_at, results) VALUES (1, 'r', 0, 1, ${at}, 0)`,
      sql`INSERT INTO buildrequests (id, buildsetid, builderid, priority, complete, results, submitted_at, complete_at)
          VALUES (1, 1, 1, 0, 1, 0, 0, ${at})`,
      sql`INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at, complete_at,
                              state_string, results) VALUES (1, 1, 1, 1, NULL, 1, 0, ${at}, 'done', 0)`,
      sql`INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
          VALUES (1, 0, 'compile', 1, 0, ${at}, 'done', 0, '[]', 0)`,
      sql`INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type) VALUES (1, 'stdio', 'stdio', 1, 1, 2, 's')`,
      sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
          VALUES (1, 0, 1, ${Buffer.from('ohello\noworld')}, 0)`,
    ])
      await db.query(q);
    const before = collection(await api.get('/logs/1/contents'), 'logchunks');
    expect(before.rows[0]).toMatchObject({ content: 'ohello\noworld\n' });

    const run = await runRetention(db, config({ logHorizon: '7d' }));
    expect(run.deleted).toMatchObject({ logs: 1, log_chunks: 1, builds: 0 });

    const build = collection(await api.get('/builds/1'), 'builds');
    expect(build.rows[0]).toMatchObject({ buildid: 1, complete: true });
    const log = collection(await api.get('/logs/1'), 'logs');
    expect(log.rows[0]).toMatchObject({ logid: 1, type: 'd', num_lines: 2, complete: true });
    const contents = await api.get('/logs/1/contents');
    expect(contents.status).toBe(200);
    expect(JSON.stringify(contents.json())).not.toContain('hello');
    const raw = await api.get('/logs/1/raw', {});
    expect([raw.status, raw.text]).toEqual([200, '']);
  });
});
