// /ws speaks Buildbot 3.7's protocol (oracle/NOTES.md, "WebSocket /ws"; www/ws.py): every
// answer and error byte for byte, events as {"k","m"} (plus our "id"), `*` one element.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../../../services/core/events/bus.js';
import { waitFor } from '../../helpers/wait.js';
import { type EventsApp, request, startEventsApp, useRedis, WsClient } from './lib.js';

const bus = useRedis();
let api: EventsApp;

beforeAll(async () => {
  api = await startEventsApp(bus.url, { maxSubscriptions: 20 });
});

afterAll(async () => {
  await api?.close();
});

async function client(): Promise<WsClient> {
  return WsClient.open(api.ws);
}

describe('commands and their answers', () => {
  it('startConsuming, ping and stopConsuming answer as Buildbot does', async () => {
    const c = await client();
    expect(await c.call({ cmd: 'startConsuming', path: 'builds/*/*', _id: 1 })).toBe(
      '{"msg":"OK","code":200,"_id":1}',
    );
    expect(await c.call({ cmd: 'ping', _id: 3 })).toBe('{"msg":"pong","code":200,"_id":3}');
    expect(await c.call({ cmd: 'stopConsuming', path: 'builds/*/*', _id: 2 })).toBe(
      '{"msg":"OK","code":200,"_id":2}',
    );
    expect(await c.call({ cmd: 'stopConsuming', path: 'builds/*/*', _id: 4 })).toBe(
      `{"error":"path was not consumed 'builds/*/*'","code":400,"_id":4}`,
    );
    c.close();
  });

  it('echoes any _id, whatever its type', async () => {
    const c = await client();
    expect(await c.call({ cmd: 'ping', _id: 'abc' })).toBe('{"msg":"pong","code":200,"_id":"abc"}');
    expect(await c.call({ cmd: 'ping', _id: { n: [1, 'é'] } })).toBe(
      '{"msg":"pong","code":200,"_id":{"n":[1,"\\u00e9"]}}',
    );
    expect(await c.call({ cmd: 'ping', _id: 0 })).toBe('{"msg":"pong","code":200,"_id":0}');
    c.close();
  });

  it.each([
    ['no _id', { cmd: 'ping' }, `{"error":"no '_id' or 'type' in websocket frame","code":400,"_id":null}`],
    [
      'a null _id',
      { cmd: 'ping', _id: null },
      `{"error":"no '_id' or 'type' in websocket frame","code":400,"_id":null}`,
    ],
    ['no cmd', { _id: 5 }, `{"error":"no 'cmd' in websocket frame","code":400,"_id":null}`],
    [
      'an unknown cmd',
      { cmd: 'subscribe', _id: 6 },
      `{"error":"no such command type 'subscribe'","code":404,"_id":6}`,
    ],
    [
      'a cmd that is not a string',
      { cmd: 5, _id: 6 },
      `{"error":"no such command type '5'","code":404,"_id":6}`,
    ],
    [
      'an unexpected argument',
      { cmd: 'ping', _id: 7, path: 'x' },
      `{"error":"Invalid method argument 'WsProtocol.cmd_ping() got an unexpected keyword argument 'path''","code":400,"_id":7}`,
    ],
    [
      'a missing path',
      { cmd: 'startConsuming', _id: 8 },
      `{"error":"Invalid method argument 'WsProtocol.cmd_startConsuming() missing 1 required positional argument: 'path''","code":400,"_id":8}`,
    ],
    [
      'a missing path to stop',
      { cmd: 'stopConsuming', _id: 8 },
      `{"error":"Invalid method argument 'WsProtocol.cmd_stopConsuming() missing 1 required positional argument: 'path''","code":400,"_id":8}`,
    ],
    [
      'an unexpected argument to startConsuming',
      { cmd: 'startConsuming', path: 'a', _id: 9, filter: 1 },
      `{"error":"Invalid method argument 'WsProtocol.cmd_startConsuming() got an unexpected keyword argument 'filter''","code":400,"_id":9}`,
    ],
    [
      'a numeric path',
      { cmd: 'startConsuming', path: 12, _id: 10 },
      `{"error":"invalid path format '12'","code":400,"_id":10}`,
    ],
    [
      'a list path',
      { cmd: 'startConsuming', path: [1, 'a', true, null], _id: 11 },
      `{"error":"invalid path format '[1, 'a', True, None]'","code":400,"_id":11}`,
    ],
    [
      'a null path',
      { cmd: 'stopConsuming', path: null, _id: 12 },
      `{"error":"invalid path format 'None'","code":400,"_id":12}`,
    ],
    [
      'an object path',
      { cmd: 'startConsuming', path: { a: "it's" }, _id: 13 },
      `{"error":"invalid path format '{'a': \\"it's\\"}'","code":400,"_id":13}`,
    ],
  ])('refuses a frame with %s', async (_what, frame, answer) => {
    const c = await client();
    expect(await c.next(frame)).toBe(answer);
    c.close();
  });

  it('answers frames that are not JSON objects with an error instead of failing', async () => {
    const c = await client();
    expect(await c.next('{not json')).toBe(
      '{"error":"invalid JSON in websocket frame","code":400,"_id":null}',
    );
    expect(await c.next('[1,2]')).toBe(
      '{"error":"websocket frame is not a JSON object","code":400,"_id":null}',
    );
    expect(await c.next('"x"')).toBe(
      '{"error":"websocket frame is not a JSON object","code":400,"_id":null}',
    );
    // The connection still works.
    expect(await c.call({ cmd: 'ping', _id: 1 })).toBe('{"msg":"pong","code":200,"_id":1}');
    c.close();
  });

  it('keeps the graphql-ws protocol apart from the Buildbot one, as Buildbot does', async () => {
    const g = await client();
    expect(await g.next({ type: 'connection_init' })).toBe('{"type":"connection_ack"}');
    expect(await g.next({ cmd: 'ping', _id: 1 })).toBe(
      `{"message":"missing 'type' in websocket frame when already started using graphql","type":"error","id":null}`,
    );
    expect(await g.next({ type: 'stop', id: 'q1' })).toBe(
      '{"message":"stopping unknown subscription","type":"error","id":"q1"}',
    );
    g.close();
    const b = await client();
    await b.call({ cmd: 'ping', _id: 1 });
    expect(await b.next({ type: 'connection_init' })).toBe(
      `{"error":"using 'type' in websocket frame when already started using buildbot protocol","code":400,"_id":null}`,
    );
    b.close();
    const offered = await WsClient.open(api.ws, {}, ['graphql-ws']);
    expect(offered.socket.protocol).toBe('graphql-ws');
    expect(await offered.next({ cmd: 'ping', _id: 1 })).toContain(`"type":"error"`);
    offered.close();
  });

  it('bounds the subscriptions of one connection', async () => {
    const c = await client();
    for (let i = 0; i < 20; i++) await c.subscribe(`builds/${i}/new`);
    expect(await c.call({ cmd: 'startConsuming', path: 'builds/99/new', _id: 'x' })).toBe(
      '{"error":"too many subscriptions (at most 20)","code":400,"_id":"x"}',
    );
    // Subscribing again to a path it has is still acknowledged.
    expect(await c.call({ cmd: 'startConsuming', path: 'builds/3/new', _id: 'y' })).toBe(
      '{"msg":"OK","code":200,"_id":"y"}',
    );
    c.close();
  });

  it('closes a connection whose frame is larger than the limit', async () => {
    const c = await client();
    c.send({ cmd: 'ping', _id: 'x'.repeat(70 * 1024) });
    await waitFor('close', () => c.closed !== null, { everyMs: 5 });
    expect(c.closed!.code).toBe(1009);
  });

  it('answers a plain GET of /ws with 426 Upgrade Required', async () => {
    const r = await request(`${api.origin}/ws`);
    expect(r.status).toBe(426);
    expect(r.type).toBe('text/plain; charset=utf-8');
  });
});

describe('events', () => {
  it('arrive as {"k","m","id"}, compact, keys in insertion order, non-ASCII escaped', async () => {
    const c = await client();
    await c.subscribe('builds/*/*');
    const message = { buildid: 12, number: 3, state_string: 'café "quoted"', results: null, complete: false };
    const id = await publish(bus.redis, ['builds', 12, 'new'], message);
    await waitFor('event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    expect(c.raw.at(-1)).toBe(
      `{"k":"builds/12/new","m":{"buildid":12,"number":3,"state_string":"caf\\u00e9 \\"quoted\\"","results":null,"complete":false},"id":"${id}"}`,
    );
    c.close();
  });

  it('match paths element by element, `*` being exactly one element of a key of the same length', async () => {
    const paths = [
      'builds/*/*',
      '*/*/*',
      'builds/12/new',
      'builds/*',
      'builders/*/builds/*/*',
      'builds/*/*/*/*',
    ];
    const clients = new Map<string, WsClient>();
    for (const p of paths) {
      const c = await client();
      await c.subscribe(p);
      clients.set(p, c);
    }
    const keys = [
      ['builds', 12, 'new'],
      ['builds', 13, 'finished'],
      ['builders', 2, 'builds', 7, 'new'],
      ['builds', 12, 'steps', 40, 'started'],
      ['steps', 40, 'started'],
      ['builds', 12],
    ];
    for (const k of keys) await publish(bus.redis, k, { k: k.join('/') });
    // Then one last event for each path, marked: each client's events come in the order they
    // were published, so once it has a marked one it has every event meant for it.
    const marked = [
      ['builds', 12, 'new'],
      ['builds', 99],
      ['builders', 99, 'builds', 99, 'new'],
      ['builds', 99, 'steps', 99, 'new'],
    ];
    for (const k of marked) await publish(bus.redis, k, { marked: true });
    await waitFor(
      'every client to have a marked event',
      () => [...clients.values()].every((c) => c.events.some((e) => e.m.marked)),
      { everyMs: 5 },
    );
    const got = (p: string) =>
      clients
        .get(p)!
        .events.filter((e) => !e.m.marked)
        .map((e) => e.k);
    expect(got('builds/*/*')).toEqual(['builds/12/new', 'builds/13/finished']);
    expect(got('*/*/*')).toEqual(['builds/12/new', 'builds/13/finished', 'steps/40/started']);
    expect(got('builds/12/new')).toEqual(['builds/12/new']);
    expect(got('builds/*')).toEqual(['builds/12']);
    expect(got('builders/*/builds/*/*')).toEqual(['builders/2/builds/7/new']);
    expect(got('builds/*/*/*/*')).toEqual(['builds/12/steps/40/started']);
    for (const c of clients.values()) c.close();
  });

  it('are sent once for a path subscribed twice, and once per subscription for overlapping paths', async () => {
    const c = await client();
    expect(await c.call({ cmd: 'startConsuming', path: 'changes/*/new', _id: 1 })).toBe(
      '{"msg":"OK","code":200,"_id":1}',
    );
    expect(await c.call({ cmd: 'startConsuming', path: 'changes/*/new', _id: 2 })).toBe(
      '{"msg":"OK","code":200,"_id":2}',
    );
    await publish(bus.redis, ['changes', 1, 'new'], { changeid: 1 });
    await waitFor('event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    await c.subscribe('changes/1/*');
    await publish(bus.redis, ['changes', 1, 'new'], { changeid: 1 });
    await publish(bus.redis, ['changes', 2, 'new'], { changeid: 2 });
    await waitFor('the last event', () => c.events.some((e) => e.m.changeid === 2), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.k)).toEqual([
      'changes/1/new',
      'changes/1/new',
      'changes/1/new',
      'changes/2/new',
    ]);
    c.close();
  });

  it('stop after stopConsuming', async () => {
    const c = await client();
    await c.subscribe('masters/*/*');
    await c.subscribe('marker');
    await publish(bus.redis, ['masters', 1, 'started'], { masterid: 1 });
    await waitFor('event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    await c.call({ cmd: 'stopConsuming', path: 'masters/*/*', _id: 'stop' });
    await publish(bus.redis, ['masters', 1, 'stopped'], { masterid: 1, n: 1 });
    // Events arrive in order: once the marker is here, the event before it was dispatched.
    await publish(bus.redis, ['marker'], {});
    await waitFor('marker', () => c.events.length === 2, { everyMs: 5, gaveUp: c.gone });
    await c.subscribe('masters/1/stopped');
    await publish(bus.redis, ['masters', 1, 'stopped'], { masterid: 1, n: 2 });
    await publish(bus.redis, ['marker'], {});
    await waitFor('the second marker', () => c.events.filter((e) => e.k === 'marker').length === 2, {
      everyMs: 5,
    });
    expect(c.events.map((e) => [e.k, e.m.n])).toEqual([
      ['masters/1/started', undefined],
      ['marker', undefined],
      ['masters/1/stopped', 2],
      ['marker', undefined],
    ]);
    c.close();
  });

  it('include control messages, which travel on the same bus', async () => {
    const c = await client();
    await c.subscribe('control/builds/*/stop');
    await publish(bus.redis, ['control', 'builds', 5, 'stop'], { reason: 'because' });
    await waitFor('control message', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    expect(c.events[0]).toMatchObject({ k: 'control/builds/5/stop', m: { reason: 'because' } });
    c.close();
  });

  it('leave the channel masters listen to as it was for what they act on: {k, m}, in stream order with the ids channel', async () => {
    const sub = bus.redis.duplicate();
    const got: [string, string][] = [];
    sub.on('message', (ch, raw) => got.push([ch, raw]));
    await sub.subscribe('flotilla:events', 'flotilla:events:with-ids');
    // A kind no master acts on (services/core/events/master-kinds.ts) reaches the ids channel
    // alone; one they act on, both.
    const connected = await publish(bus.redis, ['workers', 1, 'connected'], { workerid: 1 });
    const change = await publish(bus.redis, ['changes', 1, 'new'], { changeid: 1 });
    await waitFor('raw messages', () => got.length === 3, { everyMs: 5 });
    expect(got).toEqual([
      ['flotilla:events:with-ids', `{"k":"workers/1/connected","m":{"workerid":1},"id":"${connected}"}`],
      ['flotilla:events', '{"k":"changes/1/new","m":{"changeid":1}}'],
      ['flotilla:events:with-ids', `{"k":"changes/1/new","m":{"changeid":1},"id":"${change}"}`],
    ]);
    await sub.quit();
  });

  it('forget a client once it disconnects', async () => {
    const c = await client();
    await c.subscribe('forget/*/*');
    const before = api.hub.subscriptionCount();
    c.close();
    await waitFor('released', () => api.hub.subscriptionCount() === before - 1, { everyMs: 5 });
  });
});
