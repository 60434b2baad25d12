// The masters' JavaScript a statement, through the real pool on the bench cluster: a build
// start's kinds of statement (a transaction of the steps' read by build, a step read whole
// as its event's JSON, the newest build of a request), prepared as a master's pool prepares
// them, and this process's CPU (process.cpuUsage: PostgreSQL's is its own) a statement, in
// turns: the driver as it is, with the texts kept by shape (services/core/db/kept-texts.ts),
// and with those and Queries not copied (uncopied-queries.ts). Reads only: run it on the
// fleet's database after `STOP_AFTER=S load/fleet/run.sh`.
//
//   node --import tsx load/bench/statement-cpu.ts "$(BENCH_PG_PORT=24440 load/bench/cluster.sh url fleet_run)" \
//     [--transactions 3000] [--turns 4]
import { parseArgs } from 'node:util';
import { createPool, many, type Queryable, sql } from '../../services/core/db/pool.js';
import { jsonOf } from '../../services/core/entities/field.js';
import { step } from '../../services/core/entities/step.js';

const { values: args, positionals } = parseArgs({
  options: { transactions: { type: 'string', default: '3000' }, turns: { type: 'string', default: '4' } },
  allowPositionals: true,
});
const [url] = positionals;
if (!url) throw new Error('usage: statement-cpu.ts DATABASE_URL [--transactions N] [--turns N]');
const transactions = Number(args.transactions);

/** Three statements and the transaction's BEGIN and COMMIT. */
const STATEMENTS = 5;
async function start(q: Queryable, i: number): Promise<void> {
  await many(q, sql`SELECT number, name FROM steps WHERE buildid = ${1 + (i % 1000)}`);
  await many(q, sql`SELECT ${jsonOf(step.fields)} AS e FROM steps a WHERE a.id = ${1 + (i % 1000)}`);
  await many(q, sql`SELECT max(id) AS id FROM builds WHERE buildrequestid = ${1 + (i % 1000)}`);
}

async function turn(shortcuts: 'none' | 'kept' | 'all'): Promise<number> {
  const db = createPool(url!, { poolSize: 1, prepare: {}, shortcuts });
  try {
    for (let i = 0; i < 200; i++) await db.tx((q) => start(q, i)); // warm: connected, prepared, compiled
    const before = process.cpuUsage();
    for (let i = 0; i < transactions; i++) await db.tx((q) => start(q, i));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / (transactions * STATEMENTS);
  } finally {
    await db.dispose();
  }
}

for (let t = 0; t < Number(args.turns); t++) {
  const [none, kept, all] = [await turn('none'), await turn('kept'), await turn('all')];
  console.log(
    `turn ${t + 1}: µs of CPU a statement: ${none.toFixed(1)} as the driver is, ${kept.toFixed(1)} texts kept, ${all.toFixed(1)} and Queries not copied`,
  );
}
