// The tail of a log still being written comes from its live stream in Redis; everything the
// stream cannot answer exactly (a finished log, lines the cap dropped, a gap left by a Redis
// failure, no stream at all) comes from PostgreSQL. To tell the two sources apart, the
// stream here holds lines marked "live" and PostgreSQL the same lines marked "stored".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { appendToLogStream, logStreamKey, readLogStreamLines } from '../../services/core/logs/live-stream.js';
import { createRedis, type Redis } from '../../services/core/redis.js';
import { testEnv } from '../helpers/env.js';
import { ApiUnderTest } from './lib/harness.js';

// Far above any id another suite's logs can have, since the test Redis is shared.
const LOG = 987_000 + (process.pid % 1000);
let api: ApiUnderTest;
let redis: Redis;

const lines = (tag: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `o${tag} ${from + i}\n`).join('');

async function contents(query: string): Promise<string> {
  const a = await api.get(`/logs/${LOG}/contents${query}`);
  expect(a.status).toBe(200);
  return a.json().logchunks[0].content;
}

beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  redis = createRedis(testEnv().redisUrl, 'log-tail-test');
  const db = api.db.pool;
  const [step] = await db.query(sql`SELECT min(id) AS id FROM steps`);
  await db.query(sql`INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
                     VALUES (${LOG}, 'live', 'live', ${step.id}, 0, 30, 's')`);
  // Three appends of ten lines, in PostgreSQL and in the stream.
  for (const first of [0, 10, 20]) {
    await db.query(sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
                       VALUES (${LOG}, ${first}, ${first + 9}, ${Buffer.from(lines('stored', first, 10).slice(0, -1))}, 0)`);
  }
  await resetStream();
});

/** The stream as the master leaves it: the same three appends. */
async function resetStream() {
  await redis.del(logStreamKey(LOG));
  for (const first of [0, 10, 20]) await appendToLogStream(redis, LOG, first, lines('live', first, 10));
}
afterAll(async () => {
  await redis?.del(logStreamKey(LOG));
  redis?.disconnect();
  await api?.close();
});

describe('the tail of an open log', () => {
  it('comes from the live stream, for any range inside it', async () => {
    expect(await contents('?offset=25')).toBe(lines('live', 25, 5));
    expect(await contents('?offset=8&limit=4')).toBe(lines('live', 8, 4));
    expect(await contents('')).toBe(lines('live', 0, 30));
    // Past the end there is nothing, as from PostgreSQL.
    expect(await contents('?offset=30&limit=5')).toBe('');
    // A limit beyond the last line stops at the last line PostgreSQL knows.
    expect(await contents('?offset=28&limit=10')).toBe(lines('live', 28, 2));
  });

  it('ignores lines the stream has that PostgreSQL does not count yet', async () => {
    await appendToLogStream(redis, LOG, 30, lines('live', 30, 5));
    expect(await contents('?offset=27')).toBe(lines('live', 27, 3));
    await resetStream();
  });

  it('comes from PostgreSQL where the stream does not reach back', async () => {
    // Keep only the newest append (lines 20..29).
    await redis.xtrim(logStreamKey(LOG), 'MAXLEN', 1);
    expect(await contents('?offset=20')).toBe(lines('live', 20, 10));
    expect(await contents('?offset=5&limit=20')).toBe(lines('stored', 5, 20));
  });

  it('comes from PostgreSQL when the stream has a gap or is gone', async () => {
    await redis.del(logStreamKey(LOG));
    await appendToLogStream(redis, LOG, 0, lines('live', 0, 10));
    await appendToLogStream(redis, LOG, 20, lines('live', 20, 10)); // 10..19 never arrived
    expect(await contents('?offset=5')).toBe(lines('stored', 5, 25));
    expect(await readLogStreamLines(redis, LOG, 20, 29)).toBe(lines('live', 20, 10));
    await redis.del(logStreamKey(LOG));
    expect(await contents('?offset=25')).toBe(lines('stored', 25, 5));
  });

  it('is never used once the log is finished', async () => {
    await appendToLogStream(redis, LOG, 0, lines('live', 0, 30));
    await api.db.pool.query(sql`UPDATE logs SET complete = 1 WHERE id = ${LOG}`);
    expect(await contents('?offset=25')).toBe(lines('stored', 25, 5));
  });
});
