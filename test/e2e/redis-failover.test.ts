// A real API process on Redis Sentinel (REDIS_SENTINELS, no REDIS_URL), with a /ws client
// following builds, across a real failover (test/helpers/sentinel.ts): the primary is killed
// with SIGKILL while the client is subscribed. Once the sentinels promote the replica, the
// pod is ready again, and the client gets the event published meanwhile (the pod reads the
// stream on from the last event it sent out) and those published after, each once and in
// order, without being told to reload: nothing it was sent was lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../../services/core/events/bus.js';
import { createRedis, type Redis } from '../../services/core/redis.js';
import { WsClient } from '../api/events/lib.js';
import { type ApiProcess, apiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { status } from '../helpers/processes.js';
import { type SentinelDeployment, startSentinelDeployment } from '../helpers/sentinel.js';
import { waitFor } from '../helpers/wait.js';

let deployment: SentinelDeployment;
let db: TestDatabase;
let api: ApiProcess;
let origin: string;
let publisher: Redis;

beforeAll(async () => {
  [deployment, db] = await Promise.all([startSentinelDeployment(), createDatabase('migrated')]);
  api = await apiProcess({
    databaseUrl: db.url,
    redisUrl: null,
    env: {
      REDIS_SENTINELS: deployment.target.sentinels.map((s) => `${s.host}:${s.port}`).join(','),
      REDIS_SENTINEL_NAME: deployment.target.masterName,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    },
  });
  origin = api.origin;
  // As a master publishes: through the same module, on the same Sentinel deployment.
  publisher = createRedis(deployment.target, 'failover-publisher');
  publisher.on('error', () => {});
});

afterAll(async () => {
  publisher?.disconnect();
  await api?.stop();
  await deployment?.stop();
  await db?.drop();
});

describe('an API pod on Redis Sentinel', () => {
  it('keeps a /ws client following events across a failover, without a gap or a repeat', async () => {
    const ws = await WsClient.open(`${origin.replace('http', 'ws')}/ws`);
    await ws.subscribe('builds/*/*');
    // The pod's subscription to the bus may still be on its way: publish until it hears.
    await waitFor(
      'an event to reach the client',
      async () => {
        await publish(publisher, ['builds', 0, 'probe'], {});
        return ws.events.length > 0;
      },
      { proc: api.proc },
    );
    const before = await publish(publisher, ['builds', 1, 'new'], { buildid: 1 });
    await waitFor('the event before the failover', () => ws.events.some((e) => e.id === before), {
      everyMs: 5,
    });
    expect(await publisher.wait(1, 10_000)).toBe(1);

    await deployment.killPrimary();
    await deployment.waitForFailover();
    // Published as soon as the new primary takes writes, perhaps before the pod's subscriber
    // is back: it reaches the client through the pod's catch-up from the stream.
    const meanwhile = await publish(publisher, ['builds', 2, 'new'], { buildid: 2 });
    await waitFor('the pod to be ready again', async () => (await status(`${origin}/readyz`)) === 200, {
      proc: api.proc,
    });
    // Until one arrives: the pod's subscriber may come back after the publisher.
    await waitFor(
      'an event published after the failover to reach the client',
      async () => {
        await publish(publisher, ['builds', 3, 'new'], { buildid: 3 });
        return ws.events.some((e) => e.k === 'builds/3/new');
      },
      { proc: api.proc },
    );

    const ids = ws.events.map((e) => e.id as string);
    const from = ids.indexOf(before);
    const seen = ws.events.slice(from + 1);
    expect(seen[0]).toEqual({ k: 'builds/2/new', m: { buildid: 2 }, id: meanwhile });
    expect(seen.slice(1).every((e) => e.k === 'builds/3/new')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ws.messages.filter((m) => m.cmd === 'reload')).toEqual([]);
    ws.close();
  });
});
