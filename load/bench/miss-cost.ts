// Where one page-cache miss of a list spends its time: the API's own work (parse and compile,
// JSON.parse of the page PostgreSQL built, rendering, ETag) and the query's round trip, as
// the read pool runs it (prepared by name, bind parameters), under PostgreSQL's default plan
// cache mode and with generic plans forced, next to a prepared `SELECT 1`. In-process timing
// loops on one connection; no HTTP (load/bench/floor.ts measures that part).
//
//   node --import tsx load/bench/miss-cost.ts "$(load/bench/cluster.sh url bench)" \
//     '/builders/1/builds?order=-number&limit=50' [--rounds 3000]
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pgFormat } from '@databases/pg';
import pg from 'pg';
import { compileRows } from '../../services/api/query/compile.js';
import { renderEnvelope } from '../../services/api/query/envelope.js';
import { groupArgs, parseResultSpec } from '../../services/api/query/parse.js';
import { parentExists } from '../../services/api/query/run.js';
import { buildRegistry } from '../../services/api/registry/index.js';
import { etagOf } from '../../services/api/reply/etag.js';

const { values: args, positionals } = parseArgs({
  options: { rounds: { type: 'string', default: '3000' } },
  allowPositionals: true,
});
const [dbUrl, target] = positionals;
if (!dbUrl || !target?.startsWith('/')) {
  throw new Error('usage: miss-cost.ts DATABASE_URL /collection?query [--rounds N]');
}
const rounds = Number(args.rounds);
const [path = '', qs = ''] = target.split('?');
const registry = buildRegistry([]);
const segments = path.split('/').filter(Boolean);
const match = registry.matcher.match(segments);
if (!match?.endpoint.collection) throw new Error(`${path} is not a collection endpoint`);
const { endpoint, args: pathArgs } = match;

function microseconds(f: () => unknown): number {
  for (let i = 0; i < 200; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) f();
  return Number(process.hrtime.bigint() - t0) / rounds / 1000;
}

async function microsecondsAsync(f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i++) await f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await f();
  return Number(process.hrtime.bigint() - t0) / rounds / 1000;
}

const compile = () => {
  const spec = parseResultSpec(groupArgs(qs), endpoint.resource.fields, endpoint.collection);
  const parent = parentExists(registry, segments);
  return compileRows({ endpoint, args: pathArgs, spec, parentExists: parent }, endpoint.resource.fields);
};
const { names } = compile();
const { text, values } = compile().query.format(pgFormat);
const name = `m${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
// The page's JSON as text, as PostgreSQL sends it: JSON.parse is timed on its own.
const asText = { getTypeParser: () => (x: string) => x };

const client = new pg.Client({ connectionString: dbUrl });
await client.connect();
try {
  const res = await client.query({ text, values, types: asText });
  const rowsJson = res.rows[0].rows as string;
  const rows = JSON.parse(rowsJson) as unknown[][];
  const total = Number(res.rows[0].total);
  const body = renderEnvelope(
    { plural: endpoint.resource.plural, rows, names, total },
    'application/json',
  ).body;
  const run = (id: string, sqlText: string, params: unknown[]) => () =>
    client.query({ name: id, text: sqlText, values: params, types: asText, rowMode: 'array' });

  const figures: [string, number][] = [
    ['parse and compile', microseconds(compile)],
    [`JSON.parse of the page (${rowsJson.length} bytes)`, microseconds(() => JSON.parse(rowsJson))],
    [
      'render',
      microseconds(() =>
        renderEnvelope({ plural: endpoint.resource.plural, rows, names, total }, 'application/json'),
      ),
    ],
    ['ETag', microseconds(() => etagOf(body))],
    ['query round trip, plan_cache_mode auto', await microsecondsAsync(run(name, text, values))],
  ];
  await client.query('SET plan_cache_mode = force_generic_plan');
  figures.push([
    'query round trip, force_generic_plan',
    await microsecondsAsync(run(`${name}g`, text, values)),
  ]);
  await client.query('RESET plan_cache_mode');
  figures.push(['SELECT 1 round trip', await microsecondsAsync(run('select1', 'SELECT 1', []))]);

  console.log(`${target} (${rounds} rounds each)`);
  for (const [label, us] of figures) console.log(`${label.padEnd(48)} ${us.toFixed(1).padStart(8)} µs`);
} finally {
  await client.end();
}
