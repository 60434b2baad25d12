// Across pods, with real API processes: every pod subscribes once to the bus and fans events
// out to its own clients, so an event published anywhere (here by the test, as a master
// would) reaches the clients of every pod; SSE add/remove reach a stream on another pod; and
// a small fan-out (100 clients over 2 pods) delivers every event to every client, in order.
// How fast is a benchmark's question: load/events/run.ts (load/events/RESULTS.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureFanout, type Pod, startPod, stopPod } from '../../../load/events/fanout.js';
import { publish } from '../../../services/core/events/bus.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/wait.js';
import { request, SseClient, useRedis, WsClient } from './lib.js';

const bus = useRedis();
const ROOT = new URL('../../../', import.meta.url).pathname;

let db: TestDatabase;

beforeAll(async () => {
  db = await createDatabase('migrated');
});

afterAll(async () => {
  await db?.drop();
});

describe('two API processes', () => {
  let pods: Pod[] = [];

  beforeAll(async () => {
    pods = await Promise.all(
      [0, 1].map(() => startPod({ databaseUrl: db.url, redisUrl: bus.url, apiDir: ROOT })),
    );
  });

  afterAll(async () => {
    await Promise.all(pods.map(stopPod));
  });

  it('deliver an event published by a third party to the clients of both', async () => {
    const ws = await Promise.all(pods.map((p) => WsClient.open(`${p.origin.replace('http', 'ws')}/ws`)));
    const sse = await Promise.all(pods.map((p) => SseClient.open(`${p.origin}/sse/listen/builds/*/*`)));
    for (const c of ws) await c.subscribe('builds/*/*');
    // A pod's subscription to the bus may still be on its way: publish until both hear.
    await waitFor(
      'events to reach both pods',
      async () => {
        await publish(bus.redis, ['builds', 0, 'probe'], {});
        return ws.every((c) => c.events.length > 0) && sse.every((s) => s.data.length > 0);
      },
      { everyMs: 100 },
    );
    const id = await publish(bus.redis, ['builds', 42, 'new'], { buildid: 42 });
    for (const c of ws)
      await waitFor('ws event', () => c.events.some((e) => e.id === id), { everyMs: 5, gaveUp: c.gone });
    for (const s of sse)
      await waitFor('sse event', () => s.events.some((e) => e.id === id), { everyMs: 5, gaveUp: s.gone });
    for (const c of ws) expect(c.events.at(-1)).toEqual({ k: 'builds/42/new', m: { buildid: 42 }, id });
    for (const c of ws) c.close();
    for (const s of sse) s.close();
  });

  it('apply an SSE add or remove received by one pod to the stream the other holds', async () => {
    const [a, b] = pods as [Pod, Pod];
    const s = await SseClient.open(`${a.origin}/sse/listen`);
    await waitFor('handshake', () => s.events.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(await request(`${b.origin}/sse/add/${s.uuid}/changes/*/new`)).toMatchObject({
      status: 200,
      body: 'ok',
    });
    await publish(bus.redis, ['changes', 8, 'new'], { changeid: 8 });
    await waitFor('event', () => s.data.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(s.data[0]).toEqual({ key: ['changes', '8', 'new'], message: { changeid: 8 } });
    expect(await request(`${b.origin}/sse/remove/${s.uuid}/changes/*/new`)).toMatchObject({
      status: 200,
      body: 'ok',
    });
    expect(await request(`${b.origin}/sse/add/00000000-0000-4000-8000-000000000000/x`)).toMatchObject({
      status: 404,
      body: 'unknown uuid',
    });
    s.close();
  });
});

describe('fan-out', () => {
  it('delivers every event to each of 100 clients over 2 pods, in order', async () => {
    const result = await measureFanout({
      databaseUrl: db.url,
      redisUrl: bus.url,
      apiDir: ROOT,
      pods: 2,
      clients: 100,
      rate: 50,
      events: 150,
      // A test waits as long as a loaded machine needs; the bound on time is the benchmark's.
      settleMs: 60_000,
    });
    expect(result.missing).toBe(0);
    expect(result.outOfOrder).toBe(0);
    expect(result.dropped).toBe(0);
  });
});
