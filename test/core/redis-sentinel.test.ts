// Flotilla's Redis clients under Redis Sentinel, across a real failover: a primary, a replica
// and three sentinels from Debian's packages (test/helpers/sentinel.ts). The clients are made
// the way every service makes them (services/core/redis.ts, and the BullMQ connections of
// services/master/jobs/queues.ts); the primary is killed with SIGKILL, and after the
// sentinels promote the replica the same clients must write and read, receive what is
// published, read the event stream on, and run queued jobs, on the new primary.
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BusMessage, busSubscription, EVENTS_CHANNEL, publish } from '../../services/core/events/bus.js';
import { readSince } from '../../services/core/events/stream.js';
import { appendToLogStream, readLogStreamLines } from '../../services/core/logs/live-stream.js';
import { createRedis, type Redis } from '../../services/core/redis.js';
import { consumerConnection, producerConnection } from '../../services/master/jobs/queues.js';
import { type SentinelDeployment, startSentinelDeployment } from '../helpers/sentinel.js';
import { waitFor } from '../helpers/wait.js';

let deployment: SentinelDeployment;
let redis: Redis;
let subscriber: Redis;
const closers: (() => Promise<unknown>)[] = [];

// The subscriber's connection events, for a failure message.
const subscriberEvents: string[] = [];

beforeAll(async () => {
  deployment = await startSentinelDeployment();
  redis = createRedis(deployment.target, 'sentinel-test');
  subscriber = createRedis(deployment.target, 'sentinel-test-events');
  for (const r of [redis, subscriber]) r.on('error', () => {});
  const t0 = Date.now();
  for (const event of ['connect', 'ready', 'close', 'reconnecting', 'end', 'error'])
    subscriber.on(event, (arg?: unknown) =>
      subscriberEvents.push(
        `${Date.now() - t0} ms ${event}${arg instanceof Error ? `: ${arg.message}` : ''}`,
      ),
    );
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  redis?.disconnect();
  subscriber?.disconnect();
  await deployment?.stop();
});

// The server a client is talking to, by the port it reports itself.
async function serverPort(r: Redis): Promise<number> {
  const info = await r.info('server');
  return Number(/tcp_port:(\d+)/.exec(info)?.[1]);
}

// For a failure message: which server each client's socket is on (a subscriber may send no
// INFO), and which one the sentinels name.
async function whereEveryoneIs(): Promise<string> {
  const named = await deployment.currentPrimaryPort().catch((err: Error) => `? (${err.message})`);
  // Whether the server holds the subscription (a lost SUBSCRIBE) or the client drops what
  // arrives: a run at 00:51 today published 1,033 times unheard, both clients on the primary.
  const subscribers = await redis
    .pubsub('NUMSUB', EVENTS_CHANNEL)
    .then((r) => String((r as unknown[])[1]))
    .catch((err: Error) => `? (${err.message})`);
  return `publisher on ${redis.stream?.remotePort}, subscriber on ${subscriber.stream?.remotePort} (${subscriber.status}), the publisher's server counts ${subscribers} subscribers to the events, the subscriber's connection events: ${subscriberEvents.join(', ')}; sentinels name ${named} (primary started on ${deployment.primaryPort}, replica ${deployment.replicaPort})`;
}

describe('Redis Sentinel', () => {
  it('keeps writes, reads, pub/sub, the event stream, log tails and jobs working across a failover', async () => {
    // Before: everything on the first primary.
    expect(await deployment.currentPrimaryPort()).toBe(deployment.primaryPort);
    expect(await serverPort(redis)).toBe(deployment.primaryPort);
    await redis.set('flotilla:test:before', 'written before the failover');

    const received: BusMessage[] = [];
    let subscribeError: Error | undefined;
    const events = busSubscription(subscriber, (err) => {
      subscribeError = err;
    });
    await events.ready;
    expect(subscribeError).toBeUndefined();
    events((msg) => received.push(msg));
    // Published until heard, as after the failover: twice in CI (2026-11-24 and 11-25, on a
    // quiet machine) a single event published here never reached the subscriber although
    // both connections were on the primary, not yet explained. Pub/sub promises no delivery
    // (the event stream is what a client that missed one reads on from); this test is about
    // the failover. The stream is read on from the last of these events below.
    // A kind masters act on (services/core/events/master-kinds.ts): only those reach the
    // masters' channel, which busSubscription reads.
    let firstId = '';
    let tries = 0;
    await waitFor(
      'the event published before the failover',
      async () => {
        firstId = await publish(redis, ['changes', 1, 'new'], { n: ++tries });
        if (received.some((m) => m.k === 'changes/1/new')) return true;
        throw new Error(`${tries} published; ${await whereEveryoneIs()}`);
      },
      { timeoutMs: 30_000 },
    );
    await appendToLogStream(redis, 77, 0, 'line 0\nline 1\n');

    const queue = new Queue('sentinel-test', {
      connection: producerConnection(deployment.target, 'sentinel-test-queue'),
      prefix: 'flotilla:test-jobs',
    });
    const ran: string[] = [];
    const worker = new Worker(
      'sentinel-test',
      async (job) => {
        ran.push(String(job.data.n));
      },
      {
        connection: consumerConnection(deployment.target, 'sentinel-test-worker'),
        prefix: 'flotilla:test-jobs',
      },
    );
    queue.on('error', () => {});
    worker.on('error', () => {});
    closers.push(
      () => worker.close(),
      () => queue.close(),
    );
    await queue.add('n', { n: 'before' });
    await waitFor('the job queued before the failover to run', () => ran.includes('before'));

    // Replication is asynchronous: what the test reads back afterwards must have reached the
    // replica before the primary dies (a write acknowledged only by a primary that then dies
    // is lost under Sentinel; see docs/scaling.md).
    expect(await redis.wait(1, 10_000)).toBe(1);

    await deployment.killPrimary();
    const promoted = await deployment.waitForFailover();
    expect(promoted).toBe(deployment.replicaPort);

    // After: the same clients, now on the promoted replica.
    await redis.set('flotilla:test:after', 'written after the failover');
    expect(await redis.get('flotilla:test:before')).toBe('written before the failover');
    expect(await redis.get('flotilla:test:after')).toBe('written after the failover');
    expect(await serverPort(redis)).toBe(deployment.replicaPort);

    // Pub/sub: the subscriber connection subscribed again on the new primary. Its SUBSCRIBE
    // may land a moment after the publisher's connection is back, so publish until heard.
    let n = 0;
    await waitFor('an event published after the failover to reach the subscriber', async () => {
      await publish(redis, ['changes', 2, 'new'], { n: ++n });
      return received.some((m) => m.k === 'changes/2/new');
    });

    // The event stream, read on from an id given before the failover, has every event since.
    const page = await readSince(redis, firstId);
    expect(page.ok).toBe(true);
    if (page.ok) {
      expect(page.events.length).toBe(n);
      expect(page.events.every((e) => e.k === 'changes/2/new')).toBe(true);
    }

    // A log's live stream carries on where it was.
    await appendToLogStream(redis, 77, 2, 'line 2\n');
    expect(await readLogStreamLines(redis, 77, 0, 2)).toBe('line 0\nline 1\nline 2\n');

    // BullMQ: the queue and the worker's blocking connection found the new primary.
    await queue.add('n', { n: 'after' });
    await waitFor('the job queued after the failover to run', () => ran.includes('after'));
    expect(ran.filter((r) => r === 'before')).toHaveLength(1);
  });
});
