// The text form of `/builds?order=-buildid&limit=50` (the statement the API runs for compact
// JSON, query/compile.ts textProjection) in variants, on one connection, alternating: what
// PostgreSQL's backend spends on each, from /proc (the bench cluster runs on this machine).
// Each variant is first checked to write the same text as the API's form. Beside the
// backend's CPU, this client's (pg's handling of the answer), which a form that moves work
// out of PostgreSQL moves here.
//
//   node --import tsx load/bench/page-text-forms.ts "$(load/bench/cluster.sh url bench)" [--reads 1500] [--rounds 8]
//
// Variants: `params`, the key text as bind parameters (as the API sends it); `literals`, the
// key text written into the statement; `format`, one format() a row instead of the || chain;
// `concat`, one concat() a row; `concatRaw`, concat() given the never-null integers as they
// are (their output function, no cast to text); `rowjson`, row_to_json() of a row whose
// columns are named and ordered as Buildbot's keys; `nomat`, the page not MATERIALIZED;
// `nototal`, without the total's subquery; `cols`, the values as 50 rows of text columns for
// the client to join (pg's rows as arrays, no type parsing); `rows`, the page's rows and
// count with no text at all (what the text costs beyond them); `select1`, a statement that
// reads nothing; `lean`, the API's statement read by a pg Submittable of its own that keeps
// each statement's type parsers and builds no pg Query or Result (what pg's own handling of
// a read costs the client).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values: args, positionals } = parseArgs({
  options: { reads: { type: 'string', default: '1500' }, rounds: { type: 'string', default: '8' } },
  allowPositionals: true,
});
const dbUrl = positionals[0];
if (!dbUrl) throw new Error('usage: page-text-forms.ts DATABASE_URL [--reads N] [--rounds N]');
const reads = Number(args.reads);
const rounds = Number(args.rounds);

// The key text before each value, and each value, in the order Buildbot writes them.
const KEYS = [
  '{"builderid":',
  ',"buildid":',
  ',"buildrequestid":',
  ',"complete":',
  ',"complete_at":',
  ',"masterid":',
  ',"number":',
  ',"properties":{},"results":',
  ',"started_at":',
  ',"state_string":',
  ',"workerid":',
  '}',
];
const VALUES = [
  'a.builderid',
  'a.id',
  'a.buildrequestid',
  '(a.complete_at IS NOT NULL)',
  'a.complete_at',
  'a.masterid',
  'a.number',
  'a.results',
  'a.started_at',
  'to_json(a.state_string)',
  'a.workerid',
].map((e) => `coalesce((${e})::text, 'null')`);
// As VALUES, for concat(), which writes each argument with its own output function and skips
// nulls: the never-null integers as they are, a boolean as the text of a CASE.
const RAW = [
  'a.builderid',
  'a.id',
  'a.buildrequestid',
  "CASE WHEN a.complete_at IS NULL THEN 'false' ELSE 'true' END",
  "coalesce(a.complete_at::text, 'null')",
  'a.masterid',
  'a.number',
  "coalesce(a.results::text, 'null')",
  'a.started_at',
  'to_json(a.state_string)',
  "coalesce(a.workerid::text, 'null')",
];
const PAGE = 'WITH page AS MATERIALIZED (SELECT a.* FROM builds a ORDER BY a.id DESC LIMIT $1)';
const TOTAL = `(SELECT coalesce(sum(cd.n), 0) FROM flotilla.count_deltas cd WHERE cd.tbl = $2::text AND cd.scope = '')`;
const statement = (body: string) =>
  `${PAGE} SELECT p.n, p.body, ${TOTAL} AS total FROM (SELECT count(*) AS n, ${body} AS body FROM page a) p`;
const chain = (key: (i: number) => string) =>
  `string_agg(${VALUES.map((v, i) => `${key(i)} || ${v}`).join(' || ')} || ${key(VALUES.length)}, ',')`;
const quote = (s: string) => `'${s.replace(/'/g, "''")}'::text`;
const concat = (values: string[]) =>
  `string_agg(concat(${values.map((v, i) => `$${i + 3}::text, ${v}`).join(', ')}, $${KEYS.length + 2}::text), ',')`;
const PARAMS = statement(chain((i) => `$${i + 3}::text`));
const NAMED = `SELECT a.builderid, a.id AS buildid, a.buildrequestid, a.complete_at IS NOT NULL AS complete,
  a.complete_at, a.masterid, a.number, '{}'::json AS properties, a.results, a.started_at, a.state_string, a.workerid FROM page a`;

const FORMS: Record<string, { text: string; values: unknown[]; same: boolean }> = {
  params: { text: PARAMS, values: [50, 'builds', ...KEYS], same: true },
  literals: { text: statement(chain((i) => quote(KEYS[i]!))), values: [50, 'builds'], same: true },
  format: {
    text: statement(`string_agg(format($3::text, ${VALUES.join(', ')}), ',')`),
    values: [50, 'builds', KEYS.map((k) => k.replace(/%/g, '%%')).join('%s')],
    same: true,
  },
  concat: { text: statement(concat(VALUES)), values: [50, 'builds', ...KEYS], same: true },
  concatRaw: { text: statement(concat(RAW)), values: [50, 'builds', ...KEYS], same: true },
  rowjson: {
    text: `${PAGE} SELECT p.n, p.body, ${TOTAL} AS total FROM (SELECT count(*) AS n, string_agg(row_to_json(r)::text, ',') AS body FROM (${NAMED}) r) p`,
    values: [50, 'builds'],
    same: true,
  },
  nomat: { text: PARAMS.replace('AS MATERIALIZED', 'AS'), values: [50, 'builds', ...KEYS], same: true },
  nototal: { text: PARAMS.replace(TOTAL, '$2::text'), values: [50, 'builds', ...KEYS], same: true },
  cols: {
    text: `${PAGE} SELECT ${VALUES.join(', ')}, ${TOTAL} AS total FROM page a`,
    values: [50, 'builds'],
    same: false,
  },
  lean: { text: PARAMS, values: [50, 'builds', ...KEYS], same: true },
  rows: { text: statement(`string_agg('x', ',')`), values: [50, 'builds'], same: false },
  select1: { text: 'SELECT 1 AS body', values: [], same: false },
};

/**
 * A prepared read as a bare pg Submittable: Bind, Describe, Execute and Sync in one write, and
 * the rows made with type parsers looked up once per statement.
 */
interface Connection {
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string>;
  parse(m: { text: string; name: string }): void;
  bind(m: { statement: string; values: unknown[]; valueMapper: (v: unknown) => unknown }): void;
  describe(m: { type: 'P'; name: string }): void;
  execute(m: { portal: string; rows: number }): void;
  sync(): void;
}
type Field = { name: string; dataTypeID: number };
const parsersOf = new Map<string, { names: string[]; parse: ((v: string) => unknown)[] }>();
class LeanRead {
  rows: Record<string, unknown>[] = [];
  callback?: (err: Error | null, res?: { rows: Record<string, unknown>[] }) => void;
  private fields?: { names: string[]; parse: ((v: string) => unknown)[] };
  private error: Error | null = null;
  constructor(
    readonly name: string,
    readonly text: string,
    readonly values: unknown[],
  ) {}
  submit(c: Connection) {
    c.stream.cork?.();
    try {
      if (!c.parsedStatements[this.name]) c.parse({ text: this.text, name: this.name });
      c.bind({
        statement: this.name,
        values: this.values,
        valueMapper: (v) => (v === null ? null : String(v)),
      });
      c.describe({ type: 'P', name: '' });
      c.execute({ portal: '', rows: 0 });
      c.sync();
    } finally {
      c.stream.uncork?.();
    }
  }
  handleRowDescription(m: { fields: Field[] }) {
    let f = parsersOf.get(this.name);
    if (!f || f.names.length !== m.fields.length) {
      f = {
        names: m.fields.map((x) => x.name),
        parse: m.fields.map((x) => pg.types.getTypeParser(x.dataTypeID, 'text') as (v: string) => unknown),
      };
      parsersOf.set(this.name, f);
    }
    this.fields = f;
  }
  handleDataRow(m: { fields: (string | null)[] }) {
    const { names, parse } = this.fields!;
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++)
      row[names[i]!] = m.fields[i] === null ? null : parse[i]!(m.fields[i]!);
    this.rows.push(row);
  }
  handleCommandComplete() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyInResponse() {}
  handleCopyData() {}
  handleError(err: Error) {
    this.error = err;
  }
  handleReadyForQuery() {
    this.callback?.(this.error, { rows: this.rows });
  }
}

const client = new pg.Client({ connectionString: dbUrl });
await client.connect();
try {
  await client.query('SET plan_cache_mode = force_generic_plan');
  const pid: number = (await client.query('SELECT pg_backend_pid() AS p')).rows[0].p;
  // utime + stime of the backend, in 10 ms ticks.
  const ticks = () => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const a = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(a[11]) + Number(a[12]);
  };
  // `cols` as the API would take rows it joins itself: arrays, every value as its text.
  const asText = { getTypeParser: () => (x: string) => x };
  const lean = (name: string) =>
    new Promise<{ rows: Record<string, unknown>[] }>((resolve, reject) => {
      const read = new LeanRead(name, FORMS[name]!.text, FORMS[name]!.values);
      read.callback = (err, res) => (err ? reject(err) : resolve(res!));
      client.query(read as unknown as pg.QueryConfig);
    });
  const run = (name: string) =>
    name === 'lean'
      ? lean(name)
      : client.query({
          name,
          text: FORMS[name]!.text,
          values: FORMS[name]!.values,
          ...(name === 'cols' ? { rowMode: 'array', types: asText } : {}),
        });
  const ref = (await run('params')).rows[0].body;
  for (const [name, f] of Object.entries(FORMS)) {
    if (f.same && (await run(name)).rows[0].body !== ref) throw new Error(`${name} writes other text`);
  }
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(FORMS).map((n) => [n, []]));
  const own: Record<string, number[]> = Object.fromEntries(Object.keys(FORMS).map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of Object.keys(FORMS)) {
      const t0 = ticks();
      const c0 = process.cpuUsage();
      for (let i = 0; i < reads; i++) await run(name);
      const c = process.cpuUsage(c0);
      cpu[name]!.push(((ticks() - t0) * 10_000) / reads);
      own[name]!.push((c.user + c.system) / reads);
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!.toFixed(0);
  for (const [name, xs] of Object.entries(cpu)) {
    console.log(
      `${name}: the backend's CPU a read, least ${sorted(xs)[0]!.toFixed(0)} µs, median ${median(xs)} µs; ` +
        `this client's, least ${sorted(own[name]!)[0]!.toFixed(0)} µs, median ${median(own[name]!)} µs`,
    );
  }
} finally {
  await client.end();
}
