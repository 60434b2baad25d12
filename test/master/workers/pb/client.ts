// A PB client over a real TCP connection, built from Flotilla's own broker in its client role,
// for tests that meet the master's PB port as a stranger would: log in with a name and a
// password, call the root, or write raw bytes.
import { connect, type Socket } from 'node:net';
import { BananaDecoder, type BananaItem } from '../../../../services/master/workers/pb/banana.js';
import { Broker, LocalObject, type RemoteReference } from '../../../../services/master/workers/pb/broker.js';
import type { Tuple } from '../../../../services/master/workers/pb/jelly.js';
import { pbResponse } from '../../../../services/master/workers/pb/login.js';

export interface PbTestClient {
  socket: Socket;
  broker: Broker;
  root: RemoteReference;
  /** Resolves once the master closed the connection. */
  closed: Promise<void>;
  /** The cred login (challenge and response); resolves to the perspective. */
  login(name: string, password: string): Promise<RemoteReference>;
}

/** `mind`: what the client passes to respond (the object the master then calls). */
export async function pbClient(
  port: number,
  mind: LocalObject = new LocalObject('Mind', { print: () => null }),
): Promise<PbTestClient> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const broker = new Broker({ isClient: true, send: (b) => socket.write(b), close: () => socket.destroy() });
  socket.on('data', (b: Buffer) => broker.receive(b));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      broker.connectionLost();
      resolve();
    }),
  );
  const root = broker.remoteForName('root');
  return {
    socket,
    broker,
    root,
    closed,
    login: async (name, password) => {
      const answer = await root.callRemote('login', Buffer.from(name));
      const [challenge, challenger] = (answer as Tuple).items as [Uint8Array, RemoteReference];
      return (await challenger.callRemote(
        'respond',
        pbResponse(password, Buffer.from(challenge)),
        mind,
      )) as RemoteReference;
    },
  };
}

/**
 * A raw connection: the bytes the master sent, what they decode to (its dialect list, then
 * expressions in the pb dialect), and its close.
 */
export async function rawPb(
  port: number,
): Promise<{ socket: Socket; received: () => Buffer; items: BananaItem[]; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const chunks: Buffer[] = [];
  const items: BananaItem[] = [];
  const decoder = new BananaDecoder((item) => {
    items.push(item);
    decoder.vocab = true;
  });
  socket.on('data', (b: Buffer) => {
    chunks.push(b);
    decoder.push(b);
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => Buffer.concat(chunks), items, closed };
}
