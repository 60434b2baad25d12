// Authorization of events end to end, on the app as service.ts builds it: a session cookie
// on the websocket's upgrade request names the user (the session hook), the events plugin
// takes that user, and the configured rules decide which events reach each socket.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { publish } from '../../../services/core/events/bus.js';
import { waitFor } from '../../helpers/wait.js';
import { WsClient } from '../events/lib.js';
import { AuthApp, testHash } from './lib.js';

let api: AuthApp;
let ws: string;
beforeAll(async () => {
  api = await AuthApp.start({
    auth: {
      users: [{ username: 'alice', password_hash: await testHash('a'), groups: ['ops'] }],
      role_matchers: [{ role: 'ops', groups: ['ops'] }],
      // deploy is builder 2 in the fixture; builder 4 is runtests.
      allow_rules: [{ match: 'view-builders', builders: ['deploy'], roles: ['ops'] }],
    },
  });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  ws = `ws://127.0.0.1:${(api.app.server.address() as { port: number }).port}/ws`;
});
afterAll(async () => {
  await api?.close();
});

it("sends a restricted builder's events to the role that may read them, and to no one else", async () => {
  const alice = await api.login('alice', 'a');
  const ops = await WsClient.open(ws, { headers: { cookie: `TWISTED_SESSION=${alice}` } });
  const anon = await WsClient.open(ws);
  try {
    for (const c of [ops, anon]) await c.subscribe('builders/*/builds/*/*');
    const open = (n: number) => ['builders', 4, 'builds', n, 'new'];
    // The bus reaches the pod: the open builder's events arrive for both.
    let n = 0;
    await waitFor(
      "the open builder's event on both sockets",
      () => {
        void publish(api.redis, open(++n), { n });
        return [ops, anon].every((c) => c.events.some((e) => e.k.startsWith('builders/4/')));
      },
      { everyMs: 5 },
    );
    await publish(api.redis, ['builders', 2, 'builds', 7, 'new'], { secret: true });
    const marker = open(1000);
    await publish(api.redis, marker, { marker: true });
    await waitFor(
      'the marker on both sockets',
      () => [ops, anon].every((c) => c.events.some((e) => e.k === marker.join('/'))),
      { everyMs: 5 },
    );
    expect(ops.events.map((e) => e.k)).toContain('builders/2/builds/7/new');
    expect(anon.events.map((e) => e.k)).not.toContain('builders/2/builds/7/new');
    expect(anon.events.length).toBeGreaterThan(1);
  } finally {
    ops.close();
    anon.close();
  }
});
