// A TCP relay in front of the test PostgreSQL that a test can cut: what a database restart or
// failover looks like to its clients (every connection dies under its queries, new ones are
// refused) without stopping the server every other suite shares.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface PgProxy {
  /** The given database URL, through the relay. */
  url: string;
  /** Kill every connection and refuse new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    cut: () => {
      down = true;
      for (const s of sockets) s.destroy();
    },
    restore: () => {
      down = false;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
