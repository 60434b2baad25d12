// A TCP relay a test can break, in front of a server every other suite shares:
// - cut(): what a restart or failover looks like to the clients (every connection dies under
//   its queries, new ones are refused), without stopping the server;
// - freeze(): what a frozen peer looks like (SIGSTOP, a paused VM, a black-holed network):
//   the connections stay open, and nothing crosses them any more, either way.
// startPgProxy gives a database URL through one.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Relay {
  port: number;
  /** Kill every connection and refuse new ones until restore(). */
  cut(): void;
  /** Let nothing through, either way, on the connections there are (new ones wait too). */
  freeze(): void;
  restore(): void;
  /** Connections refused since the last cut (how often the clients tried again). */
  readonly refused: number;
  close(): Promise<void>;
}

export interface PgProxy extends Relay {
  /** The given database URL, through the relay. */
  url: string;
}

/**
 * `port`: the server's, or a choice made for each new connection (a Service in front of
 * several servers that routes to one that is ready).
 */
export async function startRelay(host: string, port: number | (() => Promise<number>)): Promise<Relay> {
  const pairs = new Set<[Socket, Socket]>();
  let down = false;
  let frozen = false;
  let refused = 0;
  const flow = (on: boolean) => {
    for (const pair of pairs) for (const s of pair) on ? s.resume() : s.pause();
  };
  const upstreamPort = typeof port === 'number' ? async () => port : port;
  const server: Server = createServer((client) => {
    if (down) {
      refused++;
      client.destroy();
      return;
    }
    client.pause();
    client.on('error', () => {});
    upstreamPort().then(
      (p) => link(client, p),
      () => client.destroy(),
    );
  });
  const link = (client: Socket, p: number) => {
    const upstream = connect(p, host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    for (const s of pair) {
      s.on('error', () => {});
      s.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
    if (frozen) flow(false);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    get refused() {
      return refused;
    },
    cut: () => {
      down = true;
      refused = 0;
      for (const pair of pairs) for (const s of pair) s.destroy();
    },
    freeze: () => {
      frozen = true;
      flow(false);
    },
    restore: () => {
      down = false;
      frozen = false;
      flow(true);
    },
    close: async () => {
      for (const pair of pairs) for (const s of pair) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const relay = await startRelay(target.hostname, Number(target.port || 5432));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  return Object.assign(relay, { url: url.toString() });
}
