// A pool that writes down every statement sent through it, in the order they were sent: the
// text as PostgreSQL receives it ($1, $2... for the values), the values, the rows that came
// back, and the BEGIN and COMMIT (or ROLLBACK) of each transaction, as @databases/pg sends
// them around a `tx`. Tests of what the masters ask of PostgreSQL read it: how many
// statements a build makes (test/master/builds/statements.test.ts), and which ones a start
// makes, against load/fleet/pgbench-start.sql.

import { pgFormat } from '@databases/pg';
import type { ConnectionPool, Queryable, SQLQuery } from '../../services/core/db/pool.js';

export interface Sent {
  /** The statement's text, `$n` for its values; BEGIN, COMMIT or ROLLBACK for a transaction's ends. */
  text: string;
  values: readonly unknown[];
  /** The rows it answered, once it has answered (null until then, or if it failed). */
  rows: readonly Record<string, unknown>[] | null;
  /** Which transaction it was sent in (numbered from 1 in the order they began), null outside one. */
  tx: number | null;
}

export interface StatementLog {
  pool: ConnectionPool;
  /** Every statement sent so far, in the order sent. */
  readonly sent: readonly Sent[];
}

export function recording(pool: ConnectionPool): StatementLog {
  const sent: Sent[] = [];
  let txs = 0;
  const send = (target: Queryable, query: SQLQuery, tx: number | null) => {
    const { text, values } = query.format(pgFormat);
    const entry: Sent = { text, values, rows: null, tx };
    sent.push(entry);
    return target.query(query).then((rows: Record<string, unknown>[]) => {
      entry.rows = rows;
      return rows;
    });
  };
  const mark = (text: string, tx: number) => sent.push({ text, values: [], rows: [], tx });
  const wrap = (q: Queryable, tx: number): Queryable =>
    new Proxy(q, {
      get(target, prop) {
        if (prop === 'query') return (s: SQLQuery) => send(target, s, tx);
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  const logged = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') return (s: SQLQuery) => send(target, s, null);
      if (prop === 'tx')
        return <T>(fn: (q: Queryable) => Promise<T>, options?: Parameters<ConnectionPool['tx']>[1]) => {
          const tx = ++txs;
          // Written down bare: none of the masters' transactions sets options (an isolation level).
          mark('BEGIN', tx);
          return target
            .tx((q) => fn(wrap(q, tx)), options)
            .then(
              (result) => {
                mark('COMMIT', tx);
                return result;
              },
              (err: unknown) => {
                mark('ROLLBACK', tx);
                throw err;
              },
            );
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { pool: logged, sent };
}
