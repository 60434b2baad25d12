// The S3 client's transport keeps connections open, and a kept connection the store closed
// while idle (the request sent on it reset before any answer) is sent once more on a new
// one; a request that fails on a new connection is not sent again.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreTransport } from '../../../services/core/objstore/transport.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

/** A server that answers the requests a connection sends, but resets it at its `resetAt`th. */
async function serve(
  resetAt: number,
): Promise<{ url: URL; seen: () => { requests: number; sockets: number } }> {
  const perSocket = new Map<Socket, number>();
  let requests = 0;
  server = createServer((req, res) => {
    requests++;
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    if (n === resetAt) return void req.socket.resetAndDestroy();
    res.end(`answer ${n}`);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/b/k`);
  return { url, seen: () => ({ requests, sockets: perSocket.size }) };
}

const get = (url: URL) => ({ method: 'GET' as const, url, headers: {}, timeoutMs: 5000 });

describe('StoreTransport', () => {
  it('sends on a kept connection, and once more on a new one when the kept one was reset', async () => {
    const { url, seen } = await serve(2);
    const t = new StoreTransport(url);
    try {
      expect((await t.request(get(url))).body.toString()).toBe('answer 1');
      // The second request goes on the kept connection, which the server resets.
      const again = await t.request(get(url));
      expect({ status: again.status, body: again.body.toString() }).toEqual({
        status: 200,
        body: 'answer 1',
      });
      expect(seen()).toEqual({ requests: 3, sockets: 2 });
    } finally {
      t.close();
    }
  });

  it('does not send again a request reset on a new connection', async () => {
    const { url, seen } = await serve(1);
    const t = new StoreTransport(url);
    try {
      await expect(t.request(get(url))).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(seen().requests).toBe(1);
    } finally {
      t.close();
    }
  });
});
