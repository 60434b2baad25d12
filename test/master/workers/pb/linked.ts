// A master-side (server) broker and a worker-side (client) broker joined in memory, delivery
// on a later tick, for tests where a client broker plays buildbot-worker's side.
import {
  Broker,
  type LocalObject,
  type RemoteReference,
} from '../../../../services/master/workers/pb/broker.js';

/** The server's reference to the client's root object, `root`. */
export function linkedRoot(root: LocalObject): RemoteReference {
  let server: Broker | undefined;
  const client = new Broker({
    isClient: true,
    send: (b) => setImmediate(() => server?.receive(b)),
    close: () => {},
  });
  server = new Broker({
    isClient: false,
    send: (b) => setImmediate(() => client.receive(b)),
    close: () => {},
  });
  client.setNamed('root', root);
  return server.remoteForName('root');
}
