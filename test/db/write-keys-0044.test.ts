// Migration 0044 rewrote the keyed write notices' functions (0016's flotilla.write_keys and
// flotilla.notify_write_keys) to send them in one inlined statement a call. What a pod's page cache
// hears must not change: two databases from the same fixture, one with 0016's function put
// back, take the same writes of every kind (INSERT, UPDATE, DELETE of each keyed table, a
// build's builder and completeness changed, a statement past 100 parts, one changing no
// row), and each write's notices, heard on real listening connections, must be the same.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

const CHANNEL = 'flotilla_write_keys';

/** 0016's functions (the keys of a row, the trigger's), from the migration's own text. */
function function0016(): string {
  const text = readFileSync(
    new URL('../../services/core/db/migrations/0016_flotilla_write_notice_keys.sql', import.meta.url),
    'utf8',
  );
  const start = text.indexOf('CREATE FUNCTION flotilla.write_keys(');
  const end = text.indexOf('END $$;', text.indexOf('CREATE FUNCTION flotilla.notify_write_keys()'));
  if (start < 0 || end < 0) throw new Error('0016 no longer holds write_keys and notify_write_keys');
  return text
    .slice(start, end + 'END $$;'.length)
    .replaceAll('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
}

interface Side {
  db: TestDatabase;
  client: pg.Client;
  listener: pg.Client;
  heard: string[];
}
const sides: Side[] = [];

async function side(setup?: string): Promise<Side> {
  const db = await createDatabase('fixture');
  const client = new pg.Client({ connectionString: db.url });
  const listener = new pg.Client({ connectionString: db.url });
  await Promise.all([client.connect(), listener.connect()]);
  if (setup) await client.query(setup);
  const heard: string[] = [];
  listener.on('notification', (n) => {
    if (n.channel === CHANNEL && n.payload !== undefined) heard.push(n.payload);
  });
  await listener.query(`LISTEN ${CHANNEL}`);
  const s = { db, client, listener, heard };
  sides.push(s);
  return s;
}

beforeAll(async () => {
  await side(function0016());
  await side();
});
afterAll(async () => {
  for (const s of sides) {
    await s.client.end();
    await s.listener.end();
    await s.db.drop();
  }
});

/**
 * The notices of one write on one side. A listener is sent the notices of every transaction
 * that committed before it took a query before that query's answer.
 */
async function noticesOf(s: Side, write: string): Promise<string[]> {
  s.heard.length = 0;
  await s.client.query(write);
  await s.listener.query('SELECT 1');
  return [...new Set(s.heard)].sort();
}

const PAST_100 = 'every build updated (past 100 parts)';
const NONE = 'no build updated';

// Each reads its rows from the fixture, so that both sides write the same rows.
const WRITES: [string, string][] = [
  [
    'a build inserted',
    `INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, state_string)
     SELECT (SELECT max(number) + 1 FROM builds), builderid, buildrequestid, workerid, masterid, started_at, 'new'
     FROM builds ORDER BY id LIMIT 1`,
  ],
  [
    'builds updated',
    'UPDATE builds SET state_string = state_string WHERE id IN (SELECT id FROM builds ORDER BY id LIMIT 3)',
  ],
  [
    'a build reopened',
    'UPDATE builds SET complete_at = NULL WHERE id = (SELECT min(id) FROM builds WHERE complete_at IS NOT NULL)',
  ],
  [
    'a build finished',
    'UPDATE builds SET complete_at = 1 WHERE id = (SELECT min(id) FROM builds WHERE complete_at IS NULL)',
  ],
  [
    'a build moved to another builder',
    `UPDATE builds SET builderid = (SELECT max(builderid) FROM builds), number = (SELECT max(number) + 1 FROM builds)
     WHERE id = (SELECT min(id) FROM builds)`,
  ],
  [
    'twenty builds updated (under 100 parts)',
    'UPDATE builds SET state_string = state_string WHERE id IN (SELECT id FROM builds ORDER BY id LIMIT 20)',
  ],
  [PAST_100, 'UPDATE builds SET state_string = state_string'],
  [NONE, 'UPDATE builds SET state_string = state_string WHERE false'],
  [
    'a step inserted',
    `INSERT INTO steps (number, name, buildid, state_string, urls_json, hidden)
     SELECT 1000, 'new', id, '', '[]', 0 FROM builds ORDER BY id LIMIT 1`,
  ],
  [
    'a build’s steps updated',
    'UPDATE steps SET state_string = state_string WHERE buildid = (SELECT min(buildid) FROM steps)',
  ],
  [
    'a step moved to another build',
    `UPDATE steps SET buildid = (SELECT max(id) FROM builds) WHERE name = 'new'`,
  ],
  [
    'a log inserted',
    `INSERT INTO logs (name, slug, stepid, complete, num_lines, type)
     SELECT 'new', 'new', id, 0, 0, 's' FROM steps ORDER BY id LIMIT 1`,
  ],
  [
    'a step’s logs updated',
    'UPDATE logs SET num_lines = num_lines WHERE stepid = (SELECT min(stepid) FROM logs)',
  ],
  [
    'log chunks inserted',
    `INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
     SELECT id, 1000000 + g, 1000000 + g, 'x', 0 FROM logs, generate_series(1, 3) g WHERE name = 'new'`,
  ],
  ['every log chunk updated', 'UPDATE logchunks SET compressed = compressed'],
  ['log chunks deleted', 'DELETE FROM logchunks WHERE first_line >= 1000000'],
  ['a log deleted', `DELETE FROM logs WHERE name = 'new'`],
  [
    'a build property inserted',
    `INSERT INTO build_properties (buildid, name, value, source)
     SELECT id, 'wkeys', '"x"', 'test' FROM builds ORDER BY id LIMIT 2`,
  ],
  ['a build’s properties updated', `UPDATE build_properties SET value = value WHERE name = 'wkeys'`],
  ['build properties deleted', `DELETE FROM build_properties WHERE name = 'wkeys'`],
  ['a step deleted', `DELETE FROM steps WHERE name = 'new'`],
  ['a build deleted', `DELETE FROM builds WHERE state_string = 'new'`],
];

describe('the keyed write notices of 0044’s function', () => {
  it('are those of 0016’s, write for write', async () => {
    const [old, now] = sides;
    if (!old || !now) throw new Error('both sides start before the test');
    const heard = new Map<string, string[]>();
    for (const [what, write] of WRITES) {
      const before = await noticesOf(old, write);
      const after = await noticesOf(now, write);
      expect({ what, notices: after }).toEqual({ what, notices: before });
      heard.set(what, before);
    }
    // Each write touched rows (a fixture without them would make both lists empty and equal),
    // but the one meant to touch none, and the one past 100 parts folded to the bare name.
    for (const [what] of WRITES)
      expect({ what, heard: (heard.get(what) ?? []).length > 0 }).toEqual({ what, heard: what !== NONE });
    expect(heard.get(PAST_100)).toEqual(['builds']);
  });
});
