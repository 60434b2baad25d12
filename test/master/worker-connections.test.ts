// Workers logging in all at once as a master comes up (issue 35: 333 a master in the fleet
// benchmark) are recorded in a few transactions, not one each, and in the order they came: a
// worker that connects and goes away at once is left disconnected
// (services/master/workers/connection-records.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/wait.js';
import { ScriptedWorker, Stage } from './in-process.js';

const N = 30;
const names = Array.from({ length: N }, (_, i) => `w${i}`);
const CONFIG = `
log_compression: none
workers: [${names.map((n) => `{ name: ${n}, password: p }`).join(', ')}]
builders:
  - { name: b1, workers: [${names.join(', ')}], steps: [{ type: shell, command: "echo ok" }] }
`;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
}, 60_000);
afterAll(() => stage?.close());

/** The pool, counting the transactions begun on it. */
function counting(pool: ConnectionPool): { pool: ConnectionPool; transactions: () => number } {
  let n = 0;
  const wrapped = new Proxy(pool, {
    get(target, key) {
      if (key === 'tx')
        return (...args: Parameters<ConnectionPool['tx']>) => {
          n++;
          return target.tx(...args);
        };
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { pool: wrapped, transactions: () => n };
}

describe('workers logging in at once', () => {
  it('are recorded in a few transactions, in order, each connected or not as it last was', async () => {
    const counted = counting(stage.db.pool);
    const m = await stage.master('logins', CONFIG, { db: counted.pool });
    const masterid = m.master.masterid;
    const before = counted.transactions();
    for (const name of names) m.workers.connect(new ScriptedWorker(name));
    m.workers.disconnect('w7');
    const connected = async () =>
      (
        await stage.db.pool.query(sql`
          SELECT w.name FROM connected_workers c JOIN workers w ON w.id = c.workerid
          WHERE c.masterid = ${masterid} ORDER BY w.name`)
      ).map((r: { name: string }) => r.name);
    const expected = names.filter((n) => n !== 'w7').sort();
    await waitFor('every login recorded', async () => (await connected()).length === expected.length);
    expect(await connected()).toEqual(expected);
    // One each was 30 (and 31 with the disconnection); the first login goes alone, the
    // others together behind it. A heartbeat or a claim pass may fall in between.
    expect(counted.transactions() - before).toBeLessThanOrEqual(6);
    // The info each login carried is stored, as one by one.
    const [w0] = await stage.db.pool.query(sql`SELECT info FROM workers WHERE name = 'w0'`);
    expect(JSON.parse(w0.info)).toMatchObject({ host: 'scripted' });
    await m.stop();
  });
});
