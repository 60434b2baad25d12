// What the event endpoints add to Buildbot: live log lines on an opt-in path, per-path
// authorization of every event, slow clients cut off at a bound, and server pings that drop
// dead clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLog, type DataContext, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { publish } from '../../../services/core/events/bus.js';
import { LogWriter } from '../../../services/master/builds/log-writer.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/wait.js';
import { type EventsApp, SseClient, startEventsApp, useRedis, WsClient } from './lib.js';

const bus = useRedis();

describe('live log lines', () => {
  let db: TestDatabase;
  let api: EventsApp;
  let ctx: DataContext;

  beforeAll(async () => {
    db = await createDatabase('fixture');
    ctx = { db: db.pool, redis: bus.redis };
    api = await startEventsApp(bus.url, { logLinesIntervalMs: 100 });
  });

  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  async function openLog(name: string): Promise<LogWriter> {
    const [step] = await db.pool.query(sql`SELECT id FROM steps ORDER BY id LIMIT 1`);
    const logid = await transact(ctx, (tx) => addLog(tx, step.id, name, 's'));
    return new LogWriter(ctx, bus.redis, logid, 's', 'raw');
  }

  it('streams the lines the master appends to an open log, as logchunks, batched', async () => {
    const writer = await openLog('live one');
    await writer.write('o', 'before the subscription\n');
    const c = await WsClient.open(api.ws);
    const wild = await WsClient.open(api.ws);
    await c.subscribe(`logs/${writer.logid}/lines`);
    await wild.subscribe('logs/*/lines');
    // The tail starts after what is already there, once it has looked (the reader's own state).
    const tails = (api.hub.logs as unknown as { tails: Map<number, { cursor: string | null }> }).tails;
    await waitFor('the tail to start', () => tails.get(writer.logid)?.cursor != null, { everyMs: 5 });
    for (let i = 0; i < 20; i++) await writer.write(i % 2 ? 'e' : 'o', `line ${i}\n`);
    const expected = Array.from({ length: 20 }, (_, i) => `${i % 2 ? 'e' : 'o'}line ${i}\n`).join('');
    await waitFor('all lines', () => c.events.map((e) => e.m.content).join('') === expected, {
      everyMs: 5,
      gaveUp: c.gone,
    });
    const events = c.events;
    expect(events.length).toBeLessThan(20);
    let line = 1;
    for (const e of events) {
      expect(e.k).toBe(`logs/${writer.logid}/lines`);
      expect(Object.keys(e.m)).toEqual(['logid', 'firstline', 'content']);
      expect(e.m.logid).toBe(writer.logid);
      expect(e.m.firstline).toBe(line);
      expect('id' in e).toBe(false);
      line += e.m.content.split('\n').length - 1;
    }
    // Only the exact path opts in: a wildcard does not start a tail.
    expect(wild.events).toEqual([]);
    c.close();
    wild.close();
  });

  it('stops tailing a log once nobody listens', async () => {
    const writer = await openLog('live two');
    const c = await WsClient.open(api.ws);
    await c.subscribe(`logs/${writer.logid}/lines`);
    expect(api.hub.logs.subscriptionCount()).toBe(1);
    await c.call({ cmd: 'stopConsuming', path: `logs/${writer.logid}/lines`, _id: 's' });
    expect(api.hub.logs.subscriptionCount()).toBe(0);
    await writer.write('o', 'unheard\n');
    // Another client tails the log from now: once it hears a later line, the reader has
    // polled since the unheard one was written, and had nobody to send it to.
    const other = await WsClient.open(api.ws);
    await other.subscribe(`logs/${writer.logid}/lines`);
    const tails = (api.hub.logs as unknown as { tails: Map<number, { cursor: string | null }> }).tails;
    await waitFor('the tail to start', () => tails.get(writer.logid)?.cursor != null, { everyMs: 5 });
    await writer.write('o', 'heard\n');
    await waitFor('the later line', () => other.events.length > 0, { everyMs: 5, gaveUp: other.gone });
    expect(other.events.map((e) => e.m.content).join('')).toBe('oheard\n');
    expect(c.events).toEqual([]);
    c.close();
    other.close();
  });
});

describe('authorization', () => {
  let api: EventsApp;
  // Users come from a header here; the auth module passes the session's user.
  const authorize = (user: Record<string, unknown>, key: readonly string[]) =>
    user.admin === true || (key[0] !== 'control' && !(key[0] === 'builds' && key[1] === '13'));

  beforeAll(async () => {
    api = await startEventsApp(bus.url, {
      authorize,
      userInfo: (req) => (req.headers['x-user'] === 'admin' ? { admin: true } : { anonymous: true }),
    });
  });

  afterAll(async () => api?.close());

  it('filters every event by what the user of each client may read', async () => {
    const anon = await WsClient.open(api.ws);
    const admin = await WsClient.open(api.ws, { headers: { 'x-user': 'admin' } });
    const sse = await SseClient.open(`${api.origin}/sse/listen/*/*/*`);
    for (const c of [anon, admin]) {
      await c.subscribe('builds/*/*');
      await c.subscribe('control/builds/*/stop');
    }
    await waitFor('sse handshake', () => sse.events.length === 1, { everyMs: 5, gaveUp: sse.gone });
    await publish(bus.redis, ['builds', 12, 'new'], { buildid: 12 });
    await publish(bus.redis, ['builds', 13, 'new'], { buildid: 13 });
    await publish(bus.redis, ['control', 'builds', 12, 'stop'], { reason: 'r' });
    await publish(bus.redis, ['builds', 14, 'new'], { buildid: 14 });
    // Events arrive in the order published: once everyone has the last, nothing else is coming.
    await publish(bus.redis, ['builds', 15, 'new'], { buildid: 15 });
    const hasLast = (keys: string[]) => keys.includes('builds/15/new');
    await waitFor(
      'the last event',
      () =>
        [admin, anon].every((c) => hasLast(c.events.map((e) => e.k))) &&
        hasLast(sse.data.map((d) => d.key.join('/'))),
      { everyMs: 5 },
    );
    expect(admin.events.map((e) => e.k)).toEqual([
      'builds/12/new',
      'builds/13/new',
      'control/builds/12/stop',
      'builds/14/new',
      'builds/15/new',
    ]);
    expect(anon.events.map((e) => e.k)).toEqual(['builds/12/new', 'builds/14/new', 'builds/15/new']);
    expect(sse.data.map((d) => d.key.join('/'))).toEqual(['builds/12/new', 'builds/14/new', 'builds/15/new']);
    anon.close();
    admin.close();
    sse.close();
  });
  it('withholds an event whose authorization throws, and goes on with the others', async () => {
    const throwing = await startEventsApp(bus.url, {
      authorize: (_u, key) => {
        if (key[1] === '13') throw new Error('no such rule');
        return true;
      },
    });
    const c = await WsClient.open(throwing.ws);
    await c.subscribe('builds/*/*');
    for (const n of [12, 13, 14, 15]) await publish(bus.redis, ['builds', n, 'new'], { buildid: n });
    await waitFor('the last event', () => c.events.some((e) => e.m.buildid === 15), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.m.buildid)).toEqual([12, 14, 15]);
    c.close();
    await throwing.close();
  });
  it("waits for a decision that takes time, keeps each client's order, and withholds a rejected one", async () => {
    // Decisions that arrive out of order: the first event's last; the third's rejected.
    const delays: Record<string, number> = { '20': 120, '21': 10, '22': 40, '23': 0 };
    const waiting = await startEventsApp(bus.url, {
      authorize: (_u, key) => {
        if (key[1] === '23' || key[1] === '24') return true;
        return new Promise<boolean>((resolve, reject) =>
          setTimeout(
            () => (key[1] === '22' ? reject(new Error('lookup failed')) : resolve(true)),
            delays[key[1]!],
          ),
        );
      },
    });
    const c = await WsClient.open(waiting.ws);
    await c.subscribe('builds/*/*');
    for (const n of [20, 21, 22, 23]) await publish(bus.redis, ['builds', n, 'new'], { buildid: n });
    // A last event, decided at once: once it is here, every earlier one was decided (order is kept).
    await publish(bus.redis, ['builds', 24, 'new'], { buildid: 24 });
    await waitFor('the last event', () => c.events.some((e) => e.m.buildid === 24), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.m.buildid)).toEqual([20, 21, 23, 24]);
    c.close();
    await waiting.close();
  });
});

describe('slow clients', () => {
  let api: EventsApp;
  const LIMIT = 256 * 1024;
  const big = 'x'.repeat(16 * 1024);

  beforeAll(async () => {
    api = await startEventsApp(bus.url, { maxBufferedBytes: LIMIT });
  });

  afterAll(async () => api?.close());

  /** The consumer that `open` creates on the pod. */
  async function newConsumer<T>(open: () => Promise<T>): Promise<[T, unknown]> {
    const before = new Set(api.hub.consumers);
    const client = await open();
    await waitFor('consumer', () => api.hub.consumers.size > before.size, { everyMs: 5 });
    return [client, [...api.hub.consumers].find((c) => !before.has(c))];
  }

  /** Publishes big events until `done` holds; the number published. */
  async function flood(done: () => boolean): Promise<number> {
    let n = 0;
    while (!done() && n < 5000) {
      await publish(bus.redis, ['flood', n, 'new'], { n, big });
      n++;
    }
    return n;
  }

  it('are disconnected with a reason once too much waits for them, while others get everything', async () => {
    const [slow, consumer] = await newConsumer(() => WsClient.open(api.ws));
    const fast = await WsClient.open(api.ws);
    await slow.subscribe('flood/*/*');
    await fast.subscribe('flood/*/*');
    // The slow client stops reading its socket.
    (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const sent = await flood(() => !api.hub.consumers.has(consumer as never));
    expect(api.hub.consumers.has(consumer as never)).toBe(false);
    // Nothing more is queued for it.
    for (let n = sent; n < sent + 5; n++) await publish(bus.redis, ['flood', n, 'new'], { n, big });
    await waitFor('fast client has everything', () => fast.events.length === sent + 5, {
      everyMs: 5,
      gaveUp: fast.gone,
    });
    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    await waitFor('slow client told', () => slow.closed !== null, { everyMs: 5 });
    expect(slow.closed).toEqual({
      code: 1008,
      reason: `too slow: more than ${LIMIT} bytes waiting to be sent`,
    });
    expect(slow.events.length).toBeLessThanOrEqual(sent);
    fast.close();
  });

  it('end an SSE stream with `event: disconnect`', async () => {
    const [s, consumer] = await newConsumer(() => SseClient.open(`${api.origin}/sse/listen/flood/*/*`));
    await waitFor('handshake', () => s.events.length === 1, { everyMs: 5, gaveUp: s.gone });
    s.res!.pause();
    await flood(() => !api.hub.consumers.has(consumer as never));
    s.res!.resume();
    await waitFor('stream ended', () => s.ended, { everyMs: 5 });
    expect(s.events.at(-1)).toEqual({
      event: 'disconnect',
      data: `{"reason": "too slow: more than ${LIMIT} bytes waiting to be sent"}`,
    });
  });
});

describe('server pings', () => {
  let api: EventsApp;

  beforeAll(async () => {
    api = await startEventsApp(bus.url, { pingIntervalMs: 100 });
  });

  afterAll(async () => api?.close());

  it('sends websocket pings and keeps a client that answers them', async () => {
    const c = await WsClient.open(api.ws);
    let pings = 0;
    c.socket.on('ping', () => pings++);
    await waitFor('three pings', () => pings >= 3, { everyMs: 5, gaveUp: c.gone });
    expect(c.closed).toBeNull();
    expect(await c.call({ cmd: 'ping', _id: 1 })).toBe('{"msg":"pong","code":200,"_id":1}');
    c.close();
  });

  it('keeps a client that answered, across a pause of the pod longer than the interval', async () => {
    // The pod's event loop held for 2.5 intervals just after the client's first pong went out
    // (ws answers a ping before it tells the listener): the heartbeat's timer then runs before
    // the socket read that carries the pong. One unanswered ping is no reason to drop it.
    const c = await WsClient.open(api.ws);
    let pings = 0;
    c.socket.on('ping', () => {
      pings++;
      if (pings !== 1) return;
      const until = Date.now() + 250;
      while (Date.now() < until) {
        // held, as by a long GC or a starved CPU
      }
    });
    await waitFor('three pings', () => pings >= 3, { everyMs: 5, gaveUp: c.gone });
    expect(c.closed).toBeNull();
    c.close();
  });

  it('drops a client that does not answer them', async () => {
    const c = await WsClient.open(api.ws, { autoPong: false });
    await c.subscribe('builds/*/*');
    await waitFor('dropped', () => c.closed !== null, { everyMs: 5 });
    expect(c.closed!.code).toBe(1006);
  });

  it('sends SSE comment lines', async () => {
    const s = await SseClient.open(`${api.origin}/sse/listen/builds/*/*`);
    await waitFor('two comment lines', () => s.comments.length >= 2, { everyMs: 5 });
    expect(s.text).toContain('\n\n: ping\n\n');
    s.close();
  });
});
