// closeQueues' choices, on stand-ins for BullMQ's workers and queues (the real ones, with Redis
// away: expire-masters.test.ts): a worker whose connections are up is closed gracefully, one
// whose are not without waiting, and a close that never returns has its connections cut.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { type Closable, closeQueues } from '../../../services/master/jobs/close-queues.js';

class Conn {
  cut = false;
  constructor(public status: string) {}
  disconnect() {
    this.cut = true;
  }
}

function closable(name: string, main: Conn, fetch: Conn, closes: 'returns' | 'never') {
  const forced: (boolean | undefined)[] = [];
  const c: Closable = {
    name,
    client: Promise.resolve(main),
    waitUntilReady: async () => fetch,
    close: (force) => {
      forced.push(force);
      return closes === 'returns' ? Promise.resolve() : new Promise<void>(() => {});
    },
  };
  return { c, forced };
}

const log = createLogger('test-close-queues', 'silent');
const bounds = { settleMs: 50, closeMs: 50 };

describe('closeQueues', () => {
  it('waits for the running jobs only when both connections are up', async () => {
    const up = closable('up', new Conn('ready'), new Conn('ready'), 'returns');
    const away = closable('away', new Conn('ready'), new Conn('reconnecting'), 'returns');
    await closeQueues([up.c, away.c], [], log, bounds);
    expect(up.forced).toEqual([false]);
    expect(away.forced).toEqual([true]);
  });

  it('cuts the connections of a worker or queue whose close never returns, and goes on', async () => {
    const [main, fetch, queueConn] = [new Conn('ready'), new Conn('ready'), new Conn('ready')];
    const stuck = closable('stuck', main, fetch, 'never');
    const queue = closable('queue', queueConn, queueConn, 'never');
    const fine = closable('fine', new Conn('ready'), new Conn('ready'), 'returns');
    await closeQueues([stuck.c, fine.c], [queue.c], log, bounds);
    expect([main.cut, fetch.cut, queueConn.cut]).toEqual([true, true, true]);
    expect(fine.forced).toEqual([false]);
  });
});
