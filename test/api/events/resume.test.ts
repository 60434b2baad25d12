// Resume (ours): every event carries its id in the event stream; a subscription made with
// the id of the last event seen first receives the matching events it missed, then live
// ones, with no gap and no repeat; outside the window kept in Redis it gets a reload frame.
// The same holds for a pod whose own subscriber connection to Redis dropped for a while.
// Events reach a client in the order they were published, so a test that must show that
// nothing more came publishes one more event and waits for it: whatever else was coming
// came before it.
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENTS_LOST_KEY, EVENTS_STREAM, publish } from '../../../services/core/events/bus.js';
import { waitFor } from '../../helpers/wait.js';
import { type EventsApp, RedisDoor, SseClient, startEventsApp, useRedis, WsClient } from './lib.js';

const bus = useRedis();
let api: EventsApp;

beforeAll(async () => {
  api = await startEventsApp(bus.url);
});

afterAll(async () => {
  await api?.close();
});

// Each test starts from a stream that lost nothing.
beforeEach(async () => {
  await bus.redis.del(EVENTS_STREAM);
});

const build = (n: number) => publish(bus.redis, ['builds', n, 'new'], { buildid: n });

describe('/ws resume', () => {
  it('sends the matching events missed since the given id, in order, then live ones', async () => {
    const first = await WsClient.open(api.ws);
    await first.subscribe('builds/*/*');
    await build(1);
    const seen = await build(2);
    await waitFor('two events', () => first.events.length === 2, { everyMs: 5, gaveUp: first.gone });
    first.close();
    await build(3);
    await publish(bus.redis, ['changes', 1, 'new'], { changeid: 1 });
    await build(4);

    const again = await WsClient.open(api.ws);
    expect(await again.call({ cmd: 'startConsuming', path: 'builds/*/*', _id: 1, since: seen })).toBe(
      '{"msg":"OK","code":200,"_id":1}',
    );
    await waitFor('missed events', () => again.events.length === 2, { everyMs: 5, gaveUp: again.gone });
    await build(5);
    await waitFor('live event', () => again.events.length === 3, { everyMs: 5, gaveUp: again.gone });
    await build(6);
    await waitFor('the last event', () => again.events.some((e) => e.m.buildid === 6), {
      everyMs: 5,
      gaveUp: again.gone,
    });
    expect(again.events.map((e) => e.m.buildid)).toEqual([3, 4, 5, 6]);
    // The ack comes before the replayed events.
    expect(JSON.parse(again.raw[0]!)).toEqual({ msg: 'OK', code: 200, _id: 1 });
    again.close();
  });

  it('replays nothing when nothing was missed', async () => {
    const seen = await build(1);
    const c = await WsClient.open(api.ws);
    await c.subscribe('builds/*/*', { since: seen });
    await build(2);
    await waitFor('live event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    await build(3);
    await waitFor('the last event', () => c.events.some((e) => e.m.buildid === 3), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.m.buildid)).toEqual([2, 3]);
    c.close();
  });

  it('neither loses nor repeats an event published while the replay runs', async () => {
    const seen = await build(0);
    for (let i = 1; i <= 300; i++) await build(i);
    const c = await WsClient.open(api.ws);
    const publishing = (async () => {
      for (let i = 301; i <= 600; i++) await build(i);
    })();
    await c.subscribe('builds/*/*', { since: seen });
    await publishing;
    await waitFor('600 events', () => c.events.length >= 600, { everyMs: 5, gaveUp: c.gone });
    await build(601);
    await waitFor('the last event', () => c.events.some((e) => e.m.buildid === 601), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.m.buildid)).toEqual(Array.from({ length: 601 }, (_, i) => i + 1));
    c.close();
  });

  it('gives /ws?last_event_id= to the opening startConsuming frames, and to no later one', async () => {
    const watcher = await WsClient.open(api.ws);
    await watcher.subscribe('masters/*/*');
    const seen = await build(1);
    await build(2);
    await publish(bus.redis, ['changes', 7, 'new'], { changeid: 7 });
    await publish(bus.redis, ['masters', 1, 'started'], { masterid: 1 });
    // Once the watcher has it, the pod has dispatched every event above.
    await waitFor('dispatched', () => watcher.events.length === 1, { everyMs: 5, gaveUp: watcher.gone });
    watcher.close();
    const c = await WsClient.open(`${api.ws}?last_event_id=${encodeURIComponent(seen)}`);
    await c.subscribe('builds/*/*');
    await c.subscribe('changes/*/*');
    await waitFor('opening replays', () => c.events.length === 2, { everyMs: 5, gaveUp: c.gone });
    await c.call({ cmd: 'ping', _id: 'p' });
    await c.subscribe('masters/*/*');
    // A later subscription replays nothing: of the masters' events only a new one comes.
    await publish(bus.redis, ['masters', 2, 'started'], { masterid: 2 });
    await waitFor('the new event', () => c.events.some((e) => e.k === 'masters/2/started'), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.k).sort()).toEqual(['builds/2/new', 'changes/7/new', 'masters/2/started']);
    c.close();
  });

  it('asks for a reload when the events after the id are no longer kept, then goes live', async () => {
    const old = await build(1);
    await build(2);
    await build(3);
    await bus.redis.xtrim(EVENTS_STREAM, 'MAXLEN', 1);
    const c = await WsClient.open(api.ws);
    await c.subscribe('builds/*/*', { since: old });
    await waitFor('reload', () => c.messages.some((m) => m.cmd === 'reload'), { everyMs: 5, gaveUp: c.gone });
    expect(c.raw[1]).toBe(
      `{"cmd":"reload","path":"builds/*/*","reason":"event id '${old}' is older than the events kept"}`,
    );
    await build(4);
    await waitFor('live event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    expect(c.events[0].m.buildid).toBe(4);
    c.close();
  });

  it('resumes from an id still kept after older ones were trimmed, and from the newest id', async () => {
    await build(1);
    const second = await build(2);
    await build(3);
    await bus.redis.xtrim(EVENTS_STREAM, 'MAXLEN', 2);
    const c = await WsClient.open(api.ws);
    await c.subscribe('builds/*/*', { since: second });
    await waitFor('missed event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    expect(c.events[0].m.buildid).toBe(3);
    const newest = await build(4);
    await waitFor('live event', () => c.events.length === 2, { everyMs: 5, gaveUp: c.gone });
    await bus.redis.xtrim(EVENTS_STREAM, 'MAXLEN', 0);
    const d = await WsClient.open(api.ws);
    await d.subscribe('builds/*/*', { since: newest });
    await build(5);
    await waitFor('live event', () => d.events.length === 1, { everyMs: 5, gaveUp: d.gone });
    await build(6);
    await waitFor('the last event', () => d.events.some((e) => e.m.buildid === 6), {
      everyMs: 5,
      gaveUp: d.gone,
    });
    expect(d.messages.some((m) => m.cmd === 'reload')).toBe(false);
    expect(d.events.map((e) => e.m.buildid)).toEqual([5, 6]);
    c.close();
    d.close();
  });

  it('asks for a reload for an id it never gave, or one from a stream Redis lost', async () => {
    await build(1);
    const c = await WsClient.open(api.ws);
    await c.subscribe('a/*', { since: '99999999999999-0' });
    await c.subscribe('b/*', { since: 'yesterday' });
    await waitFor('reloads', () => c.messages.filter((m) => m.cmd === 'reload').length === 2, {
      everyMs: 5,
      gaveUp: c.gone,
    });
    // Two subscriptions, each answered on its own: their reloads may come in either order.
    expect(
      c.messages
        .filter((m) => m.cmd === 'reload')
        .map((m) => m.reason)
        .sort(),
    ).toEqual(["unknown event id '99999999999999-0'", "unknown event id 'yesterday'"]);
    const lost = await build(2);
    await bus.redis.del(EVENTS_STREAM);
    // A restarted Redis starts its new stream's ids at a later millisecond.
    const lostAt = Number(lost.split('-')[0]);
    await waitFor('a later millisecond', () => Date.now() > lostAt);
    await build(3);
    await c.subscribe('builds/*/*', { since: lost });
    await waitFor('reload', () => c.messages.filter((m) => m.cmd === 'reload').length === 3, {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(await c.call({ cmd: 'startConsuming', path: 'c/*', _id: 9, since: 5 })).toBe(
      `{"error":"invalid event id '5'","code":400,"_id":9}`,
    );
    c.close();
  });

  it('never sends a user the missed events it may not read', async () => {
    const guarded = await startEventsApp(bus.url, {
      authorize: (_u, key) => key[1] !== '13',
    });
    const seen = await build(11);
    await build(12);
    await build(13);
    const c = await WsClient.open(guarded.ws);
    await c.subscribe('builds/*/*', { since: seen });
    await build(14);
    await waitFor('events', () => c.events.length === 2, { everyMs: 5, gaveUp: c.gone });
    await build(15);
    await waitFor('the last event', () => c.events.some((e) => e.m.buildid === 15), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.m.buildid)).toEqual([12, 14, 15]);
    c.close();
    await guarded.close();
  });
});

describe('SSE resume', () => {
  it('replays the listen path after the Last-Event-ID header, with ids on every event', async () => {
    const seen = await build(1);
    await build(2);
    await publish(bus.redis, ['changes', 1, 'new'], { changeid: 1 });
    const third = await build(3);
    const s = await SseClient.open(`${api.origin}/sse/listen/builds/*/*`, { 'last-event-id': seen });
    await waitFor('missed events', () => s.data.length === 2, { everyMs: 5, gaveUp: s.gone });
    expect(s.events.filter((e) => e.event === 'event').map((e) => e.id)).toEqual([expect.any(String), third]);
    expect(s.data.map((d) => d.message.buildid)).toEqual([2, 3]);
    s.close();
    const q = await SseClient.open(`${api.origin}/sse/listen/builds/*/*?last_event_id=${seen}`);
    await waitFor('missed events', () => q.data.length === 2, { everyMs: 5, gaveUp: q.gone });
    q.close();
  });

  it('sends `event: reload` outside the window', async () => {
    const old = await build(1);
    await build(2);
    await build(3);
    await bus.redis.xtrim(EVENTS_STREAM, 'MAXLEN', 1);
    const s = await SseClient.open(`${api.origin}/sse/listen/builds/*/*`, { 'last-event-id': old });
    await waitFor('reload', () => s.events.some((e) => e.event === 'reload'), { everyMs: 5, gaveUp: s.gone });
    expect(s.text).toContain(
      `event: reload\ndata: {"path": "builds/*/*", "reason": "event id '${old}' is older than the events kept"}\n\n`,
    );
    s.close();
  });
});

describe('a pod whose subscriber connection drops', () => {
  // The pod's subscriber reaches Redis through a door the test shuts and opens: it is away
  // exactly while the test publishes (and trims), however slow the machine.
  async function podBehindDoor(): Promise<{ pod: EventsApp; door: RedisDoor; close: () => Promise<void> }> {
    const door = await RedisDoor.open(bus.url);
    const subscriber = new IORedis(door.url, { retryStrategy: () => 20, connectionName: 'door-sub' });
    // Cut off on purpose: its errors are the point, not news.
    subscriber.on('error', () => {});
    const pod = await startEventsApp(bus.url, { subscriber });
    return {
      pod,
      door,
      close: async () => {
        await pod.close();
        await door.close();
      },
    };
  }

  it('fills the gap from the event stream once it is back', async () => {
    const { pod, door, close } = await podBehindDoor();
    const c = await WsClient.open(pod.ws);
    await c.subscribe('builds/*/*');
    await build(1);
    await waitFor('first event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    door.cut();
    for (let i = 2; i <= 50; i++) await build(i);
    door.reopen();
    for (let i = 51; i <= 60; i++) await build(i);
    await waitFor('all events', () => c.events.length >= 60, { everyMs: 5, gaveUp: c.gone });
    await build(61);
    await waitFor('the last event', () => c.events.some((e) => e.m.buildid === 61), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.events.map((e) => e.m.buildid)).toEqual(Array.from({ length: 61 }, (_, i) => i + 1));
    c.close();
    await close();
  });

  it('tells its clients to reload when the events it missed are gone', async () => {
    const { pod, door, close } = await podBehindDoor();
    const c = await WsClient.open(pod.ws);
    await c.subscribe('builds/*/*');
    await c.subscribe('changes/*/*');
    await build(1);
    await waitFor('first event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    door.cut();
    await build(2);
    await build(3);
    await bus.redis.xtrim(EVENTS_STREAM, 'MAXLEN', 1);
    door.reopen();
    await waitFor('reloads', () => c.messages.filter((m) => m.cmd === 'reload').length === 2, {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.messages.filter((m) => m.cmd === 'reload').map((m) => m.path)).toEqual([
      'builds/*/*',
      'changes/*/*',
    ]);
    await build(4);
    await waitFor('live again', () => c.events.some((e) => e.m.buildid === 4), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    c.close();
    await close();
  });
});

// A process whose queue of events overflowed while Redis was away publishes one mark in
// their place (services/core/events/publisher.ts): clients live then, or resuming across it,
// are told to reload.
describe('events a process dropped', () => {
  const lost = () => publish(bus.redis, EVENTS_LOST_KEY.split('/'), { lost: 3 });

  it('make every subscription of a live client reload, and events go on after', async () => {
    const c = await WsClient.open(api.ws);
    await c.subscribe('builds/*/*');
    await c.subscribe('changes/*/*');
    await build(1);
    await waitFor('first event', () => c.events.length === 1, { everyMs: 5, gaveUp: c.gone });
    await lost();
    await build(2);
    await waitFor('the event after the mark', () => c.events.some((e) => e.m.buildid === 2), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    const reloads = c.messages.filter((m) => m.cmd === 'reload');
    expect(reloads.map((m) => m.path)).toEqual(['builds/*/*', 'changes/*/*']);
    expect(c.events.map((e) => e.k)).toEqual(['builds/1/new', 'builds/2/new']);
    c.close();
  });

  it('make a subscription that resumes across the mark reload', async () => {
    const seen = await build(1);
    await lost();
    await build(2);
    const c = await WsClient.open(api.ws);
    await c.subscribe('builds/*/*', { since: seen });
    await waitFor('the missed event', () => c.events.some((e) => e.m.buildid === 2), {
      everyMs: 5,
      gaveUp: c.gone,
    });
    expect(c.messages.filter((m) => m.cmd === 'reload').map((m) => m.path)).toEqual(['builds/*/*']);
    c.close();
  });
});
