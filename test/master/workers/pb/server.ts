// A test-only PB server for a real buildbot-worker, built from Flotilla's PB layers (banana,
// jelly, broker, cred login) and the PbWorkerConnection, on a TCP port of 127.0.0.1: the
// smallest server that lets a test drive a PbWorkerConnection through its interface, with
// its broker at hand (the master's own listener, protocols.pb, is tested in listener.test.ts).
import { createServer, type Server } from 'node:net';
import { Broker } from '../../../../services/master/workers/pb/broker.js';
import { PbWorkerConnection } from '../../../../services/master/workers/pb/connection.js';
import { pbLoginRoot } from '../../../../services/master/workers/pb/login.js';
import { freePort } from '../../../helpers/processes.js';

export interface TestPbServer {
  port: number;
  /** The connection of each logged-in worker, with its broker. */
  workers: Map<string, { conn: PbWorkerConnection; broker: Broker }>;
  log: string[];
  close(): Promise<void>;
}

export async function startTestPbServer(passwords: Record<string, string>): Promise<TestPbServer> {
  const port = await freePort();
  const workers: TestPbServer['workers'] = new Map();
  const log: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const broker = new Broker({
      isClient: false,
      send: (b) => socket.write(b),
      close: () => socket.destroy(),
      log: (l) => log.push(l),
    });
    broker.setNamed(
      'root',
      pbLoginRoot({
        password: (name) => passwords[name],
        loggedIn: (name, mind) => {
          if (!mind) throw new Error('a worker logs in with a mind');
          const conn = new PbWorkerConnection(name, mind, {
            pause: () => socket.pause(),
            resume: () => socket.resume(),
            close: () => socket.destroy(),
          });
          broker.onDisconnect(() => conn.closed('worker disconnected'));
          workers.set(name, { conn, broker });
          return conn.perspective();
        },
        refused: (name, why) => log.push(`refused ${name}: ${why}`),
      }),
    );
    socket.on('data', (b: Buffer) => broker.receive(b));
    socket.on('close', () => broker.connectionLost());
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port,
    workers,
    log,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
