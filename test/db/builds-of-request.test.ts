// A build's start first reads the newest build of its request (core/data/builds.ts
// lastBuildOfRequest), and the request has none yet. With PostgreSQL's statistics for
// `builds` missing or old (a fresh database, a table grown since its last ANALYZE) the
// planner answered `max(id) ... WHERE buildrequestid = $1` by walking the primary key
// backwards for the first row of that request, which for a request without builds is every
// row of the table: 2,405 buffers a call at 5,700 builds in pgbench's runs of a start
// (load/results/fleet.md, 2026-11-29 05:50-06:30), ten million at the fleet's size.
// Migration 0046's index (buildrequestid, id) answers it in one descent whatever the
// statistics say.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseWithClient } from '../helpers/databases.js';
import { pendingRequestsSql } from '../helpers/pending-requests.js';

const BUILDS = 3000;
let db: Awaited<ReturnType<typeof createDatabaseWithClient>>;
let client: pg.Client;
beforeAll(async () => {
  db = await createDatabaseWithClient();
  client = db.client;
  // Statistics taken while the table was empty, then the rows: what a fresh installation's
  // first hours, or pgbench's seeded database, look like to the planner.
  await client.query(`
    ANALYZE builds;
    ${pendingRequestsSql(BUILDS + 1, ['b'])}
    INSERT INTO builds (number, builderid, buildrequestid, masterid, started_at, state_string)
    SELECT row_number() OVER (ORDER BY r.id), r.builderid, r.id, (SELECT id FROM masters), 0, 'x'
    FROM buildrequests r ORDER BY r.id LIMIT ${BUILDS};`);
});
afterAll(async () => {
  await db.drop();
});

/** The buffers the statement as core/data sends it reads, planned as a prepared statement's generic plan. */
async function buffersOf(request: number): Promise<number> {
  await client.query('SET plan_cache_mode = force_generic_plan');
  await client.query('PREPARE last_build(int) AS SELECT max(id) AS id FROM builds WHERE buildrequestid = $1');
  try {
    const { rows } = await client.query(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE last_build(${request})`,
    );
    const plan = (
      rows[0]['QUERY PLAN'] as { Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }[]
    )[0]!.Plan;
    return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
  } finally {
    await client.query('DEALLOCATE last_build; RESET plan_cache_mode');
  }
}

describe('the newest build of a request', () => {
  it('is read in a few pages for a request without builds, whatever the statistics', async () => {
    const { rows } = await client.query('SELECT max(id) AS id FROM buildrequests');
    const withoutBuilds = Number(rows[0].id);
    expect(await buffersOf(withoutBuilds)).toBeLessThan(10);
  });

  it('and for one with a build', async () => {
    const { rows } = await client.query('SELECT buildrequestid AS id FROM builds ORDER BY id LIMIT 1');
    expect(await buffersOf(Number(rows[0].id))).toBeLessThan(10);
  });
});
