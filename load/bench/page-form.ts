// The page of `/builds?order=-buildid&limit=50` in two forms, read by one pg client in one
// process: as the API reads it (one row: the page as json_agg of json_build_array, the total,
// the parent's existence) and as plain rows (rowMode 'array', the total joined laterally).
// Wall time and this process's CPU per read: what PostgreSQL saves by not building JSON, and
// what pg then spends parsing each value (load/results/page-cache-miss.md).
//
//   node --import tsx load/bench/page-form.ts "$(load/bench/cluster.sh url bench)" [--reads 4000]
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values: args, positionals } = parseArgs({
  options: { reads: { type: 'string', default: '4000' } },
  allowPositionals: true,
});
const dbUrl = positionals[0];
if (!dbUrl) throw new Error('usage: page-form.ts DATABASE_URL [--reads N]');
const reads = Number(args.reads);

const FIELDS = `a.builderid, a.id, a.buildrequestid, (a.complete_at IS NOT NULL), a.complete_at, a.masterid,
  a.number, '{}'::json, a.results, a.started_at, a.state_string, a.workerid`;
const TOTAL = `(SELECT coalesce(sum(cd.n), 0) FROM flotilla.count_deltas cd WHERE cd.tbl = $2::text AND cd.scope = '')`;
const FORMS = {
  json: `WITH page AS MATERIALIZED (SELECT a.* FROM builds a ORDER BY a.id DESC LIMIT $1)
    SELECT (SELECT coalesce(json_agg(json_build_array(${FIELDS}) ORDER BY a.id DESC), '[]'::json) FROM page a) AS rows,
           ${TOTAL} AS total, NULL::boolean AS parent_exists`,
  plain: `WITH t AS (SELECT ${TOTAL} AS total, NULL::boolean AS parent_exists)
    SELECT t.total, t.parent_exists, p.* FROM t
    LEFT JOIN LATERAL (SELECT ${FIELDS} FROM builds a ORDER BY a.id DESC LIMIT $1) p ON true`,
};

const client = new pg.Client({ connectionString: dbUrl });
await client.connect();
try {
  await client.query('SET plan_cache_mode = force_generic_plan');
  for (let round = 1; round <= 2; round++) {
    for (const [name, text] of Object.entries(FORMS)) {
      const config = {
        name,
        text,
        values: [50, 'builds'],
        ...(name === 'plain' ? { rowMode: 'array' } : {}),
      };
      for (let i = 0; i < 500; i++) await client.query(config);
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < reads; i++) await client.query(config);
      const wall = Number(process.hrtime.bigint() - t0) / reads / 1000;
      const cpu = process.cpuUsage(cpu0);
      console.log(
        `round ${round} ${name.padEnd(5)} ${wall.toFixed(1)} µs a read, ${((cpu.user + cpu.system) / reads).toFixed(1)} µs of this process's CPU`,
      );
    }
  }
} finally {
  await client.end();
}
