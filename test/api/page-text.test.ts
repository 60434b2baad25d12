// The text form of a page (query/compile.ts, textProjection): PostgreSQL writes the entities'
// compact JSON itself, leaving lists and objects for the renderer. It must answer byte for
// byte what the values form answers (the page by column, rendered by pyjson.ts), on every
// list the registry serves and for any string a row may hold.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool } from '../../services/api/db-routing/read-pool.js';
import { renderEnvelope } from '../../services/api/query/envelope.js';
import { groupArgs, parseResultSpec } from '../../services/api/query/parse.js';
import { type PreparedRows, prepareRows, readPrepared } from '../../services/api/query/run.js';
import type { Registry } from '../../services/api/registry/index.js';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { oracleRegistry } from './lib/harness.js';

const JSON_ACCEPT = 'application/json';
let db: TestDatabase;
let pool: ReadPool;
let registry: Registry;

beforeAll(async () => {
  db = await createDatabase('fixture');
  pool = new ReadPool(db.url, 2, 1);
  registry = oracleRegistry();
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

function prepared(url: string): { values: PreparedRows; text: PreparedRows; collection: boolean } {
  const [path = '', qs = ''] = url.split('?');
  const segments = path.split('/').filter(Boolean);
  const match = registry.matcher.match(segments);
  if (match?.endpoint.kind !== 'rows') throw new Error(`${url}: not a rows endpoint`);
  const { endpoint, args } = match;
  const spec = parseResultSpec(groupArgs(qs), endpoint.resource.fields, endpoint.collection);
  const values = prepareRows(registry, endpoint, args, segments, spec);
  if (!values.text) throw new Error(`${url}: no text form`);
  return { values, text: values.text, collection: endpoint.collection };
}

/** Both forms' answers: the body, or the error each threw. */
async function both(url: string): Promise<{ values: string; text: string }> {
  const p = prepared(url);
  const [path = ''] = url.split('?');
  const endpoint = registry.matcher.match(path.split('/').filter(Boolean))!.endpoint;
  const answer = async (form: PreparedRows) => {
    try {
      const { env } = await readPrepared(pool, endpoint, form);
      return renderEnvelope(env, JSON_ACCEPT).body;
    } catch (err) {
      return `error: ${(err as Error).message}`;
    }
  };
  return { values: await answer(p.values), text: await answer(p.text) };
}

async function ids() {
  const [row] = await db.pool.query(sql`
    SELECT (SELECT max(id) FROM builds) AS buildid, (SELECT max(id) FROM builders) AS builderid,
           (SELECT max(changeid) FROM changes) AS changeid, (SELECT max(id) FROM masters) AS masterid,
           (SELECT max(id) FROM workers) AS workerid, (SELECT max(id) FROM buildsets) AS bsid,
           (SELECT max(id) FROM steps) AS stepid, (SELECT max(id) FROM sourcestamps) AS ssid,
           (SELECT max(id) FROM buildrequests) AS brid`);
  return row as Record<string, number>;
}

describe('the text form of a page', () => {
  it('answers what the values form answers, on every kind of list and entity of the fixture', async () => {
    const i = await ids();
    const urls = [
      '/builds',
      '/builds?order=-buildid&limit=5&offset=2',
      '/builds?property=*&limit=20',
      '/builds?field=buildid&field=state_string&field=properties',
      '/builds?complete=false',
      '/builds?buildid=0',
      `/builds/${i.buildid}`,
      `/builds/${i.buildid}?property=*`,
      `/builds/${i.buildid}/steps`,
      `/builds/${i.buildid}/changes`,
      `/builders/${i.builderid}/builds?order=-number&limit=3`,
      '/builders',
      `/builders/${i.builderid}`,
      '/buildrequests?property=*',
      `/buildrequests/${i.brid}`,
      '/workers',
      `/workers/${i.workerid}`,
      '/buildsets',
      `/buildsets/${i.bsid}`,
      '/changes',
      '/changes?field=files&field=sourcestamp&field=properties&limit=7',
      `/changes/${i.changeid}`,
      '/changesources',
      '/masters',
      `/masters/${i.masterid}/builders`,
      '/sourcestamps',
      `/sourcestamps/${i.ssid}`,
      '/schedulers',
      '/forceschedulers',
      `/steps/${i.stepid}`,
      `/builds/${i.buildid}/property_list`,
      '/application.spec',
      '/builds/999999999',
    ];
    for (const url of urls) {
      const { values, text } = await both(url);
      expect(text, url).toBe(values);
    }
  });

  it('writes any string as the values form does: escapes, non-ASCII, U+0001 and U+007F, astral planes', async () => {
    const i = await ids();
    // PostgreSQL's text holds no NUL and only whole code points.
    const storable = fc
      .string({ unit: 'binary', maxLength: 12 })
      .filter(
        (s) =>
          !s.includes('\u0000') && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')),
      );
    const tricky = fc.oneof(
      storable,
      fc.constantFrom(
        '\u0001',
        '\u007f',
        'a"b\\c',
        '\n\t\r\b\f\u001f',
        'é😀\u2028',
        '',
        '{"x":1}',
        '\u0001\u0001',
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        tricky,
        tricky,
        fc.array(tricky, { maxLength: 3 }),
        async (state, description, tags) => {
          await db.pool.query(sql`UPDATE builds SET state_string = ${state} WHERE id = ${i.buildid}`);
          await db.pool.query(
            sql`UPDATE builders SET description = ${description} WHERE id = ${i.builderid}`,
          );
          await db.pool.query(sql`DELETE FROM builders_tags WHERE builderid = ${i.builderid}`);
          for (const [k, tag] of [...new Set(tags)].entries()) {
            await db.pool.query(sql`
            WITH t AS (INSERT INTO tags (name, name_hash) VALUES (${tag}, md5(${tag}) || ${String(k)})
                       ON CONFLICT (name_hash) DO UPDATE SET name = EXCLUDED.name RETURNING id)
            INSERT INTO builders_tags (builderid, tagid) SELECT ${i.builderid}, id FROM t`);
          }
          for (const url of [`/builds/${i.buildid}`, `/builders/${i.builderid}`, '/builders']) {
            const { values, text } = await both(url);
            expect(text, url).toBe(values);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
