// The event publisher (services/core/events/publisher.ts) against a real redis-server that
// the test starts and kills: events queued while Redis is away go out once it is back, in the
// order they were queued; past the bound the oldest are dropped and announced, in their place,
// by one EVENTS_LOST_KEY event.

import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS_LOST_KEY, EVENTS_STREAM, parseBusMessage } from '../../../services/core/events/bus.js';
import { collectEventMetrics } from '../../../services/core/events/metrics.js';
import { EventPublisher, publisherFor } from '../../../services/core/events/publisher.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { type Running, startRedis } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const servers: Running[] = [];
const clients: Redis[] = [];

afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const s of servers) await s.stop('SIGKILL');
});

function client(url: string): Redis {
  const c = createRedis(url, 'publisher-test');
  // The kill below makes it lose its connection: expected, and reconnecting is its handling.
  c.on('error', () => {});
  clients.push(c);
  return c;
}

/** The keys and messages in the event stream, oldest first. */
async function streamed(redis: Redis): Promise<{ k: string; m: unknown }[]> {
  const entries = await redis.xrange(EVENTS_STREAM, '-', '+');
  return entries.map(([, fields]) => {
    const msg = parseBusMessage(fields[1]!);
    if (!msg) throw new Error(`not an event: ${fields[1]}`);
    return { k: msg.k, m: msg.m };
  });
}

describe('the event publisher', () => {
  it('sends what was queued while Redis was away once it is back, in order, the oldest past the bound announced as lost', async () => {
    const first = await startRedis();
    servers.push(first.proc);
    const redis = client(first.url);
    const errors: Error[] = [];
    const publisher = new EventPublisher(redis, { limit: 5, onError: (err) => errors.push(err) });

    publisher.enqueue([{ key: ['test', 0, 'e'], message: { n: 0 } }]);
    await publisher.flushed();
    expect((await streamed(redis)).map((e) => e.k)).toEqual(['test/0/e']);

    await first.proc.stop('SIGKILL');
    await waitFor('the client to notice', () => redis.status !== 'ready');
    // Twelve events while nothing answers: enqueue returns at once, as a committed
    // transaction's caller does.
    for (let n = 1; n <= 12; n++) publisher.enqueue([{ key: ['test', n, 'e'], message: { n } }]);
    const out = publisher.flushed();
    expect(publisher.pending).toBeGreaterThan(0);

    // Back on the same port, empty (no data, no scripts loaded): what waited goes out.
    const second = await startRedis(first.port);
    servers.push(second.proc);
    await out;

    const events = await streamed(redis);
    // The first of the twelve was already on its way when the rest came: ioredis may have
    // held it until Redis was back (then it went first), or failed it (then it was dropped
    // with the oldest).
    const early = events[0]?.k === 'test/1/e' ? 1 : 0;
    expect(events.slice(early).map((e) => e.k)).toEqual([
      EVENTS_LOST_KEY,
      'test/8/e',
      'test/9/e',
      'test/10/e',
      'test/11/e',
      'test/12/e',
    ]);
    expect(events[early]!.m).toEqual({ lost: 7 - early });
    expect(publisher.dropped).toBe(7 - early);
    expect(publisher.published).toBe(6 + early);
    expect(errors.length).toBeGreaterThan(0);
    publisher.stop();
  });

  it('drops what waits, without an unhandled rejection, once its connection is closed for good', async () => {
    const server = await startRedis();
    servers.push(server.proc);
    const redis = client(server.url);
    await waitFor('the client to connect', () => redis.status === 'ready');
    const publisher = new EventPublisher(redis);
    // As a test's teardown or a process's end does: disconnect with events still to send.
    for (let n = 1; n <= 1000; n++) publisher.enqueue([{ key: ['test', n, 'e'], message: {} }]);
    redis.disconnect();
    await publisher.flushed();
    expect(publisher.pending).toBe(0);
    expect(publisher.dropped).toBeGreaterThan(0);
    expect(publisher.dropped + publisher.published).toBe(1000);
  });

  it('shows on /metrics what waits for Redis, what it confirmed and what was dropped', async () => {
    const server = await startRedis();
    servers.push(server.proc);
    const redis = client(server.url);
    await waitFor('the client to connect', () => redis.status === 'ready');
    const registry = new Registry();
    collectEventMetrics(registry, redis);
    const sample = async (name: string) => {
      const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
      return Number(line?.split(' ')[1]);
    };
    // The publisher of the connection, as a process's commits use it (core/data/transaction.ts).
    const publisher = publisherFor(redis);
    publisher.enqueue([1, 2, 3].map((n) => ({ key: ['test', n, 'e'], message: {} })));
    await publisher.flushed();
    expect(await sample('flotilla_events_waiting')).toBe(0);
    expect(await sample('flotilla_events_published_total')).toBe(3);
    expect(await sample('flotilla_events_dropped_total')).toBe(0);

    for (let n = 1; n <= 1000; n++) publisher.enqueue([{ key: ['test', n, 'e'], message: {} }]);
    redis.disconnect();
    await publisher.flushed();
    const published = await sample('flotilla_events_published_total');
    const dropped = await sample('flotilla_events_dropped_total');
    expect(dropped).toBeGreaterThan(0);
    expect(published + dropped).toBe(1003);
    expect(await sample('flotilla_events_waiting')).toBe(0);
  });
});
