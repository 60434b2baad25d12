// What the event endpoints add to Buildbot: live log lines on an opt-in path, per-path
// authorization of every event, slow clients cut off at a bound, and server pings that drop
// dead clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLog, type DataContext, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { publish } from '../../../services/core/events/bus.js';
import { LogWriter } from '../../../services/master/build/log-writer.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { type EventsApp, SseClient, sleep, startEventsApp, until, useRedis, WsClient } from './lib.js';

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
    await sleep(150); // the tail starts after what is already there
    for (let i = 0; i < 20; i++) await writer.write(i % 2 ? 'e' : 'o', `line ${i}\n`);
    const expected = Array.from({ length: 20 }, (_, i) => `${i % 2 ? 'e' : 'o'}line ${i}\n`).join('');
    await until('all lines', () => c.events.map((e) => e.m.content).join('') === expected, 5000);
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
    await sleep(250);
    expect(c.events).toEqual([]);
    c.close();
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
    await until('sse handshake', () => sse.events.length === 1);
    await publish(bus.redis, ['builds', 12, 'new'], { buildid: 12 });
    await publish(bus.redis, ['builds', 13, 'new'], { buildid: 13 });
    await publish(bus.redis, ['control', 'builds', 12, 'stop'], { reason: 'r' });
    await publish(bus.redis, ['builds', 14, 'new'], { buildid: 14 });
    await until('admin events', () => admin.events.length === 4);
    await until('anonymous events', () => anon.events.length === 2 && sse.data.length === 2);
    await sleep(50);
    expect(admin.events.map((e) => e.k)).toEqual([
      'builds/12/new',
      'builds/13/new',
      'control/builds/12/stop',
      'builds/14/new',
    ]);
    expect(anon.events.map((e) => e.k)).toEqual(['builds/12/new', 'builds/14/new']);
    expect(sse.data.map((d) => d.key.join('/'))).toEqual(['builds/12/new', 'builds/14/new']);
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
    for (const n of [12, 13, 14]) await publish(bus.redis, ['builds', n, 'new'], { buildid: n });
    await until('events', () => c.events.length === 2);
    await sleep(50);
    expect(c.events.map((e) => e.m.buildid)).toEqual([12, 14]);
    c.close();
    await throwing.close();
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
    await until('consumer', () => api.hub.consumers.size > before.size);
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
    await until('fast client has everything', () => fast.events.length === sent + 5, 10_000);
    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    await until('slow client told', () => slow.closed !== null, 15_000);
    expect(slow.closed).toEqual({
      code: 1008,
      reason: `too slow: more than ${LIMIT} bytes waiting to be sent`,
    });
    expect(slow.events.length).toBeLessThanOrEqual(sent);
    fast.close();
  });

  it('end an SSE stream with `event: disconnect`', async () => {
    const [s, consumer] = await newConsumer(() => SseClient.open(`${api.origin}/sse/listen/flood/*/*`));
    await until('handshake', () => s.events.length === 1);
    s.res!.pause();
    await flood(() => !api.hub.consumers.has(consumer as never));
    s.res!.resume();
    await until('stream ended', () => s.ended, 15_000);
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
    await sleep(550);
    expect(pings).toBeGreaterThanOrEqual(3);
    expect(c.closed).toBeNull();
    expect(await c.call({ cmd: 'ping', _id: 1 })).toBe('{"msg":"pong","code":200,"_id":1}');
    c.close();
  });

  it('drops a client that does not answer them', async () => {
    const c = await WsClient.open(api.ws, { autoPong: false });
    await c.subscribe('builds/*/*');
    await until('dropped', () => c.closed !== null, 2000);
    expect(c.closed!.code).toBe(1006);
  });

  it('sends SSE comment lines', async () => {
    const s = await SseClient.open(`${api.origin}/sse/listen/builds/*/*`);
    await sleep(350);
    expect(s.comments.length).toBeGreaterThanOrEqual(2);
    expect(s.text).toContain('\n\n: ping\n\n');
    s.close();
  });
});
