// One page read through the API's own read path (prepareRows, readPrepared, renderEnvelope
// and the ETag, on a ReadPool of one connection), in each form the compiler has: `values` (the
// page by column, parsed and rendered by Node) and `text` (PostgreSQL writes the entities'
// JSON; query/compile.ts, textProjection). Per read: wall time, this process's CPU and the
// PostgreSQL backend's CPU (from /proc), with no HTTP around it (miss-ratio.ts has that).
//
//   node --import tsx load/bench/read-forms.ts "$(load/bench/cluster.sh url bench)" \
//     '/builds?order=-buildid&limit=50' [--reads 1000] [--rounds 20] [--form values|text]
//
// The forms alternate, one round of `--reads` each, so that both see the same load; on a
// machine shared with other work the minimum over rounds is the steadiest figure of what a
// read costs, the median what it cost meanwhile. Both are printed.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ReadPool } from '../../services/api/db-routing/read-pool.js';
import { renderEnvelope } from '../../services/api/query/envelope.js';
import { groupArgs, parseResultSpec } from '../../services/api/query/parse.js';
import { type PreparedRows, prepareRows, readPrepared } from '../../services/api/query/run.js';
import { buildRegistry } from '../../services/api/registry/index.js';
import { etagOf } from '../../services/api/reply/etag.js';
import { sql } from '../../services/core/db/pool.js';

const { values: args, positionals } = parseArgs({
  options: {
    reads: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '20' },
    // Only this form (to profile PostgreSQL's backend on one form alone, for example).
    form: { type: 'string' },
  },
  allowPositionals: true,
});
const [dbUrl, target] = positionals;
if (!dbUrl || !target?.startsWith('/'))
  throw new Error('usage: read-forms.ts DATABASE_URL /path?query [options]');
const reads = Number(args.reads);

const [path = '', qs = ''] = target.split('?');
const registry = buildRegistry([]);
const segments = path.split('/').filter(Boolean);
const match = registry.matcher.match(segments);
if (match?.endpoint.kind !== 'rows') throw new Error(`${path} is not a rows endpoint`);
const { endpoint, args: pathArgs } = match;
const spec = parseResultSpec(groupArgs(qs), endpoint.resource.fields, endpoint.collection);
const values = prepareRows(registry, endpoint, pathArgs, segments, spec);
const forms = ([['values', values]] as [string, PreparedRows | undefined][])
  .concat([['text', values.text]])
  .filter((f): f is [string, PreparedRows] => f[1] !== undefined && (!args.form || f[0] === args.form));

// One connection each way, so that every read of a form runs on the backend measured.
const pool = new ReadPool(dbUrl, 1, 1);
const genericPlan = values.compiled.genericPlan;
const [{ pid }] = (await pool.rows<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`, {
  genericPlan,
})) as [{ pid: number }];

/** utime + stime of a process, in µs (USER_HZ 100). */
function cpuOf(p: number): number {
  const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

const readOnce = async (form: PreparedRows) => {
  const { env } = await readPrepared(pool, endpoint, form);
  const { body } = renderEnvelope(env, 'application/json');
  const bytes = Buffer.from(body);
  return etagOf(bytes);
};

try {
  const etags = new Set<string>();
  for (const [, form] of forms) {
    for (let i = 0; i < 300; i++) await readOnce(form);
    etags.add(await readOnce(form));
  }
  if (etags.size !== 1) throw new Error('the forms answered different pages');
  const figures = new Map<string, { wall: number[]; node: number[]; pg: number[] }>();
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const [name, form] of forms) {
      const node0 = process.cpuUsage();
      const pg0 = cpuOf(pid);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < reads; i++) await readOnce(form);
      const wall = Number(process.hrtime.bigint() - t0) / 1000 / reads;
      const node = process.cpuUsage(node0);
      const f = figures.get(name) ?? { wall: [], node: [], pg: [] };
      f.wall.push(wall);
      f.node.push((node.user + node.system) / reads);
      f.pg.push((cpuOf(pid) - pg0) / reads);
      figures.set(name, f);
    }
  }
  const stat = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `min ${s[0]!.toFixed(0)}, median ${s[Math.floor(s.length / 2)]!.toFixed(0)}`;
  };
  console.log(`${target}: ${reads} reads a round, ${args.rounds} rounds, µs a read`);
  for (const [name, f] of figures) {
    console.log(
      `${name.padEnd(6)} wall ${stat(f.wall)}; this process's CPU ${stat(f.node)}; PostgreSQL's CPU ${stat(f.pg)}`,
    );
  }
} finally {
  await pool.end();
}
