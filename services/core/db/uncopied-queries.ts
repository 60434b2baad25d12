// A connection's statements handed to node-postgres as its own Query, built from the text,
// so that it does not copy each one first. The driver (@databases/pg) hands each statement to
// `client.query` as an object `{ text, values, name }`; node-postgres copies any such object
// before reading it (utils.normalizeQueryConfig: Object.create and defineProperties of its
// property descriptors): 4.3-10 µs a statement against 0.16-0.49 µs for the same Query built
// from the text (`node --import tsx load/bench/kept-texts.ts --rounds 50000 --turns 5`,
// 2026-11-29 06:24, load 21), for the 18 of a start's 24.2 statements that carry values (not its
// 3 BEGIN and 3 COMMIT: pg_stat_statements, load/results/fleet.md 05:52); its frame alone
// was 2.2-2.9% of the masters' busy samples outside the socket writes in phase S (05:52 and
// 06:00). Given a Query (a "submittable", node-postgres' public way in for pg-cursor and the
// like) it neither copies nor wraps it in a promise of its own; this wrapper makes the promise
// the driver awaits, as node-postgres did: resolved with the result, rejected with the error.
//
// Done once per connection (the pg Client under a transaction's driver), for the objects the
// driver formats only: anything else (BEGIN and COMMIT as strings, a cursor, a call with
// values or a callback apart) goes to node-postgres unchanged.
import pg from 'pg';

const { Query } = pg;

interface Formatted {
  text: string;
  values: unknown[];
  name?: string;
}

type ClientQuery = (config: unknown, values?: unknown, callback?: unknown) => unknown;

const done = new WeakSet<object>();

function isFormatted(config: unknown): config is Formatted {
  return (
    typeof config === 'object' &&
    config !== null &&
    Object.getPrototypeOf(config) === Object.prototype &&
    typeof (config as Formatted).text === 'string' &&
    Array.isArray((config as Formatted).values)
  );
}

/** `client`'s formatted statements sent as Queries from now on (once per client). */
export function sendUncopied(client: object): void {
  if (done.has(client)) return;
  done.add(client);
  const c = client as { query: ClientQuery };
  const query = c.query.bind(client) as ClientQuery;
  c.query = (config, values, callback) => {
    if (values !== undefined || callback !== undefined || !isFormatted(config)) {
      return query(config, values, callback);
    }
    return new Promise((resolve, reject) => {
      const q = new Query(config.text, config.values, (err: Error | undefined, res: unknown) =>
        err ? reject(err) : resolve(res),
      );
      // What node-postgres reads at submit to send the statement prepared under its name.
      if (config.name !== undefined) (q as unknown as { name: string }).name = config.name;
      query(q);
    });
  };
}

/** The pg Client under a @databases/pg transaction (its driver's), when there is one. */
export function clientOf(transaction: object): object | undefined {
  return (transaction as { _driver?: { client?: object } })._driver?.client;
}
