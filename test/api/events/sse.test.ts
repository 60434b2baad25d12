// /sse speaks Buildbot 3.7's server-sent events (oracle/NOTES.md; www/sse.py): listen, add
// and remove, the handshake and the event framing; an unknown uuid is a 404, not a crash;
// and add/remove work from any pod, whichever pod holds the stream.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { publish } from '../../../services/core/events/bus.js';
import { waitFor } from '../../helpers/wait.js';
import { type EventsApp, request, SseClient, startEventsApp, useRedis } from './lib.js';

const bus = useRedis();
let podA: EventsApp;
let podB: EventsApp;

beforeAll(async () => {
  podA = await startEventsApp(bus.url);
  podB = await startEventsApp(bus.url);
});

afterAll(async () => {
  await podA?.close();
  await podB?.close();
});

// Each test closes its streams; a pod lets go of a closed one a moment later. Counts the
// tests read start from none.
beforeEach(async () => {
  await waitFor(
    'no stream left from before',
    () => podA.hub.consumers.size === 0 && podB.hub.consumers.size === 0,
    { everyMs: 5 },
  );
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('listen', () => {
  it('starts with the handshake, then frames each event as Buildbot does', async () => {
    const s = await SseClient.open(`${podA.origin}/sse/listen/builds/*/*`);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream');
    await waitFor('handshake', () => s.events.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(s.text).toMatch(/^event: handshake\ndata: [0-9a-f-]{36}\n\n$/);
    expect(s.uuid).toMatch(UUID);
    const id = await publish(bus.redis, ['builds', 12, 'new'], { buildid: 12, name: 'café', results: null });
    await waitFor('event', () => s.data.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(s.text.slice(s.text.indexOf('\n\n') + 2)).toBe(
      `event: event\ndata: {"key": ["builds", "12", "new"], "message": {"buildid": 12, "name": "caf\\u00e9", "results": null}}\nid: ${id}\n\n`,
    );
    s.close();
  });

  it('listens to a path given without the listen command, and ignores one trailing slash', async () => {
    const bare = await SseClient.open(`${podA.origin}/sse/changes/*/new`);
    const slash = await SseClient.open(`${podA.origin}/sse/listen/changes/*/new/`);
    const gone = () => bare.gone() ?? slash.gone();
    await waitFor(
      'the handshakes of both streams',
      () => bare.events.length === 1 && slash.events.length === 1,
      {
        everyMs: 5,
        gaveUp: gone,
      },
    );
    await publish(bus.redis, ['changes', 3, 'new'], { changeid: 3 });
    await waitFor('the event on both streams', () => bare.data.length === 1 && slash.data.length === 1, {
      everyMs: 5,
      gaveUp: gone,
    });
    expect(bare.data[0]).toEqual({ key: ['changes', '3', 'new'], message: { changeid: 3 } });
    bare.close();
    slash.close();
  });

  it('with no path sends the handshake and nothing else until paths are added', async () => {
    const s = await SseClient.open(`${podA.origin}/sse/listen`);
    // A stream that listens to changes, on the same pod: once it has the event, the pod has
    // handed it to every stream it holds.
    const watcher = await SseClient.open(`${podA.origin}/sse/listen/changes/*/*`);
    await waitFor(
      'the handshakes of both streams',
      () => s.events.length === 1 && watcher.events.length === 1,
      {
        everyMs: 5,
        gaveUp: () => s.gone() ?? watcher.gone(),
      },
    );
    await publish(bus.redis, ['changes', 4, 'new'], { changeid: 4 });
    await waitFor('the watcher to have it', () => watcher.data.length === 1, {
      everyMs: 5,
      gaveUp: watcher.gone,
    });
    expect(s.data).toEqual([]);
    s.close();
    watcher.close();
  });

  it('forgets the subscriptions of a stream the client closed', async () => {
    const before = podA.hub.subscriptionCount();
    const s = await SseClient.open(`${podA.origin}/sse/listen/workers/*/connected`);
    await waitFor('subscribed', () => podA.hub.subscriptionCount() === before + 1, { everyMs: 5 });
    s.close();
    await waitFor('released', () => podA.hub.subscriptionCount() === before, { everyMs: 5 });
  });
});

describe('add and remove', () => {
  it('add a path to a stream and remove it, answering ok', async () => {
    const s = await SseClient.open(`${podA.origin}/sse/listen`);
    await waitFor('handshake', () => s.events.length === 1, { everyMs: 5, gaveUp: s.gone });
    const added = await request(`${podA.origin}/sse/add/${s.uuid}/buildsets/*/new`);
    expect(added).toEqual({ status: 200, type: 'text/plain; charset=utf-8', body: 'ok' });
    await publish(bus.redis, ['buildsets', 1, 'new'], { bsid: 1 });
    await waitFor('event', () => s.data.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(await request(`${podA.origin}/sse/remove/${s.uuid}/buildsets/*/new`)).toMatchObject({
      status: 200,
      body: 'ok',
    });
    const watcher = await SseClient.open(`${podA.origin}/sse/listen/buildsets/*/new`);
    await waitFor('handshake', () => watcher.events.length === 1, { everyMs: 5, gaveUp: watcher.gone });
    await publish(bus.redis, ['buildsets', 2, 'new'], { bsid: 2 });
    await waitFor('the watcher to have it', () => watcher.data.length === 1, {
      everyMs: 5,
      gaveUp: watcher.gone,
    });
    watcher.close();
    await waitFor('the watcher forgotten', () => podA.hub.consumers.size === 1, { everyMs: 5 });
    expect(s.data.map((d) => d.message.bsid)).toEqual([1]);
    expect(await request(`${podA.origin}/sse/remove/${s.uuid}/buildsets/*/new`)).toEqual({
      status: 404,
      type: 'text/plain; charset=utf-8',
      body: 'consumer is not listening to this event',
    });
    s.close();
  });

  it('answer 404 for an unknown uuid and 400 without one', async () => {
    for (const cmd of ['add', 'remove']) {
      expect(await request(`${podA.origin}/sse/${cmd}/not-a-uuid/builds/*/*`)).toEqual({
        status: 404,
        type: 'text/plain; charset=utf-8',
        body: 'unknown uuid',
      });
      expect(await request(`${podA.origin}/sse/${cmd}`)).toEqual({
        status: 400,
        type: 'text/plain; charset=utf-8',
        body: 'need uuid',
      });
    }
  });

  it('add the same path twice as one subscription', async () => {
    const s = await SseClient.open(`${podA.origin}/sse/listen/steps/*/new`);
    await waitFor('handshake', () => s.events.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect((await request(`${podA.origin}/sse/add/${s.uuid}/steps/*/new`)).body).toBe('ok');
    await publish(bus.redis, ['steps', 9, 'new'], { stepid: 9 });
    await publish(bus.redis, ['steps', 10, 'new'], { stepid: 10 });
    // In order: a second copy of the first would come before the second.
    await waitFor('the second event', () => s.data.some((d) => d.message.stepid === 10), {
      everyMs: 5,
      gaveUp: s.gone,
    });
    expect(s.data.map((d) => d.message.stepid)).toEqual([9, 10]);
    s.close();
  });

  it('work through any pod: the pod that holds the stream applies what another pod received', async () => {
    const s = await SseClient.open(`${podA.origin}/sse/listen`);
    await waitFor('handshake', () => s.events.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(await request(`${podB.origin}/sse/add/${s.uuid}/logs/*/finished`)).toMatchObject({
      status: 200,
      body: 'ok',
    });
    await publish(bus.redis, ['logs', 5, 'finished'], { logid: 5 });
    await waitFor('event', () => s.data.length === 1, { everyMs: 5, gaveUp: s.gone });
    expect(await request(`${podB.origin}/sse/remove/${s.uuid}/logs/*/finished`)).toMatchObject({
      status: 200,
      body: 'ok',
    });
    expect(await request(`${podB.origin}/sse/remove/${s.uuid}/logs/*/finished`)).toMatchObject({
      status: 404,
      body: 'consumer is not listening to this event',
    });
    s.close();
    await waitFor('stream forgotten', () => podA.hub.consumers.size === 0, { everyMs: 5 });
    // Once the stream is gone, its uuid is soon unknown everywhere.
    await waitFor(
      'the uuid to be unknown on the other pod',
      async () => (await request(`${podB.origin}/sse/add/${s.uuid}/logs/*/finished`)).body === 'unknown uuid',
    );
    expect(await request(`${podB.origin}/sse/add/${s.uuid}/logs/*/finished`)).toMatchObject({
      status: 404,
      body: 'unknown uuid',
    });
  });
});
