// What a statement's formatting costs the master's JavaScript, with and without the texts
// kept by shape (services/core/db/kept-texts.ts): core/data's own step writes of a build
// start (newStep's two statements, setStepStateString's entity write with its event JSON)
// built as in a master, then what @databases/pg does with each before the driver (split on
// `;`, format, the prepared name looked up by text), in-process, no database: the rows
// answered are none, so each write ends in its "no such step" error, caught. Then what
// node-postgres does first with each statement: a Query made from the driver's object (which
// it copies) or from its text (uncopied-queries.ts).
//
//   node --import tsx load/bench/kept-texts.ts [--rounds 20000] [--turns 5]
import { parseArgs } from 'node:util';
import { pgFormat } from '@databases/pg';
import splitSqlQuery from '@databases/split-sql-query';
import pg from 'pg';
import { newStep, setStepStateString } from '../../services/core/data/steps.js';
import { Outbox, type Tx } from '../../services/core/data/transaction.js';
import { KeptTexts } from '../../services/core/db/kept-texts.js';
import type { Queryable, SQLQuery } from '../../services/core/db/pool.js';
import { PreparedStatements } from '../../services/core/db/prepared-statements.js';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '20000' }, turns: { type: 'string', default: '5' } },
});
const rounds = Number(args.rounds);

/** A transaction whose statements go through the driver's formatting, timed alone. */
function driverOf(kept: KeptTexts | undefined): { tx: Tx; perStatement: () => number } {
  const prepared = new PreparedStatements();
  let statements = 0;
  let ns = 0n;
  const query = async (q: SQLQuery) => {
    const start = process.hrtime.bigint();
    kept?.keep(q);
    for (const one of splitSqlQuery.default(q)) {
      const f = one.format(pgFormat);
      prepared.nameFor(f.text, f.values);
      statements++;
    }
    ns += process.hrtime.bigint() - start;
    return [];
  };
  const tx = { q: { query } as unknown as Queryable, out: new Outbox(), lockedBuild: 1 };
  return { tx, perStatement: () => Number(ns) / 1000 / statements };
}

async function run(kept: KeptTexts | undefined): Promise<number> {
  const { tx, perStatement } = driverOf(kept);
  for (let i = 0; i < rounds; i++) {
    await newStep(tx, 1, 'shell', { started: true }).catch(() => undefined);
    await setStepStateString(tx, i, `running ${i}`).catch(() => undefined);
  }
  return perStatement();
}

/** Nanoseconds a node-postgres Query, made from an object as the driver hands it or from the text. */
function queries(): { copied: number; fromText: number } {
  const text = 'INSERT INTO u (id, a) VALUES ($1, $2) RETURNING id, a';
  const n = rounds * 5;
  let start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) new pg.Query({ text, values: [i, 'a'], name: 'f0' });
  const copied = Number(process.hrtime.bigint() - start) / n;
  start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const q = new pg.Query(text, [i, 'a']);
    (q as unknown as { name: string }).name = 'f0';
  }
  return { copied, fromText: Number(process.hrtime.bigint() - start) / n };
}

for (let turn = 0; turn < Number(args.turns); turn++) {
  const before = await run(undefined);
  const after = await run(new KeptTexts());
  const { copied, fromText } = queries();
  console.log(
    `turn ${turn + 1}: ${before.toFixed(2)} µs a statement formatted each time, ${after.toFixed(2)} µs kept; ` +
      `a Query ${(copied / 1000).toFixed(2)} µs copied, ${(fromText / 1000).toFixed(2)} µs from the text`,
  );
}
