// A master's two worker listeners (listen.ts) answer the same faults the same way, whichever
// protocol a worker speaks: wrong credentials and unknown names are refused (on Flotilla's
// protocol by a close after the hello; on msgpack_experimental_v7 on the upgrade, where
// Buildbot's worker sends them, with Buildbot's status), a malformed frame closes with 4004,
// a frame nested a hundred thousand deep with 4004 too (issue 28's review: it held), a frame
// over the limit with 1009, and a name connected by one protocol is refused by the
// other with 4002.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CloseCode } from '../../../services/core/protocol/messages.js';
import type { WorkerListeners } from '../../../services/master/workers/listen.js';
import { MAX_FRAME_BYTES } from '../../../services/master/workers/msgpack/server.js';
import { waitFor } from '../../helpers/wait.js';
import { hello, startListeners } from './lib.js';

let listeners: WorkerListeners;

beforeAll(async () => {
  listeners = await startListeners(['a', 'b']);
});
afterAll(() => listeners?.close());

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

/** A Flotilla-protocol client that says hello; `then` runs once the master welcomed it. */
function flotilla(
  name: string,
  password: string,
  then?: (ws: WebSocket) => void,
): { closed: Promise<number>; ws: WebSocket } {
  const ws = new WebSocket(`ws://127.0.0.1:${listeners.ports.flotilla}/worker`);
  ws.on('open', () => ws.send(hello(name, password)));
  ws.on('message', (data) => {
    if (JSON.parse(data.toString()).type === 'welcome') then?.(ws);
  });
  ws.on('error', () => {});
  return { ws, closed: new Promise((resolve) => ws.on('close', (code) => resolve(code))) };
}

/** A msgpack client: the upgrade's status when refused, else how the link closed. */
function msgpack(
  name: string,
  password: string,
  then?: (ws: WebSocket) => void,
): Promise<{ status: number } | { closed: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${listeners.ports.msgpack_experimental_v7}/`, {
      headers: { Authorization: basic(`${name}:${password}`) },
    });
    ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
    // The master's first request ("print") shows the link is up.
    ws.once('message', () => then?.(ws));
    ws.on('close', (code) => resolve({ closed: code }));
    ws.on('error', () => {});
  });
}

/** The master has seen a worker's link close (the client may hear of it first). */
const gone = (name: string) => waitFor(`${name} to be gone`, () => listeners.get(name) === undefined);

const oversize = () => Buffer.alloc(MAX_FRAME_BYTES + 1, 0x61);

describe('both worker listeners', () => {
  it('refuse wrong credentials and unknown names', async () => {
    expect(await flotilla('a', 'wrong').closed).toBe(CloseCode.badCredentials);
    expect(await flotilla('nobody', 'pa').closed).toBe(CloseCode.badCredentials);
    expect(await msgpack('a', 'wrong')).toEqual({ status: 401 });
    expect(await msgpack('nobody', 'pa')).toEqual({ status: 401 });
  });

  it('close a link that sends a malformed frame with 4004', async () => {
    expect(await flotilla('a', 'pa', (ws) => ws.send('{"type":"output"}')).closed).toBe(CloseCode.badMessage);
    await gone('a');
    expect(await msgpack('a', 'pa', (ws) => ws.send(Buffer.from([0xc1])))).toEqual({
      closed: CloseCode.badMessage,
    });
  });

  it('close a link that sends a frame nested 100,000 deep with 4004, and keep serving', async () => {
    const depth = 100_000;
    const json = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(await flotilla('a', 'pa', (ws) => ws.send(json)).closed).toBe(CloseCode.badMessage);
    await gone('a');
    // fixarray of one element (0x91), each holding the next; the innermost is nil.
    const packed = Buffer.concat([Buffer.alloc(depth, 0x91), Buffer.from([0xc0])]);
    expect(await msgpack('a', 'pa', (ws) => ws.send(packed))).toEqual({ closed: CloseCode.badMessage });
    await gone('a');
    // The listeners still take a worker.
    const welcomed = new Promise<WebSocket>((resolve) => flotilla('a', 'pa', resolve));
    (await welcomed).close();
    await gone('a');
  });

  it('close a link that sends a frame over the limit with 1009', async () => {
    expect(await flotilla('a', 'pa', (ws) => ws.send(oversize())).closed).toBe(1009);
    await gone('a');
    expect(await msgpack('a', 'pa', (ws) => ws.send(oversize()))).toEqual({ closed: 1009 });
  });

  it('refuse a name that is connected by the other protocol with 4002', async () => {
    const welcomed = new Promise<WebSocket>((resolve) => flotilla('b', 'pb', resolve));
    const ws = await welcomed;
    expect(listeners.get('b')).toBeDefined();
    expect(await msgpack('b', 'pb')).toEqual({ closed: CloseCode.alreadyConnected });
    // The first connection is untouched.
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
  });
});
