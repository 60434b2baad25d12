// A PB port: a TCP listener where each connection gets its own broker (./broker.ts: banana,
// jelly, references) with the cred login as its `root` (./login.ts), and a login is handed by
// its username to the account registered for it on this port (./accounts.ts): the configured
// workers (./workers.ts) and, sharing the port as in Buildbot, the other PB users.
//
// What a client gets wrong is said in one master log line with its peer and a stable code,
// and nothing escapes into the master: a malformed or oversize banana stream and an unknown
// jelly type in an answer close the connection (the broker's refusal, as Twisted drops it);
// an unknown jelly type in a call's arguments, a call to a method that does not exist and a
// call to an object that does not exist get Twisted's answer (InsecureJelly, NoSuchMethod,
// Invalid Object ID) and the connection stays; a wrong password and an unknown name get
// UnauthorizedLogin and count as failed logins in the master's one throttle (as on the other
// worker ports); a throttled login has its connection closed unanswered (buildbot-worker then
// retries later, as it does after any lost connection; UnauthorizedLogin it also retries).
// A connection that has not logged in within LOGIN_TIMEOUT_MS is closed, so that idle
// sockets cannot pile up before any password was given.
//
// Plain TCP, as Buildbot's default `pb` port and every worker made by `create-worker`:
// the login never sends the password (an MD5 challenge and response), and WORKER_TLS
// (Flotilla's agent and msgpack) does not apply here (docs/migrating-from-buildbot.md).
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../../core/telemetry/logger.js';
import type { WorkerLoginThrottle } from '../login-throttle.js';
import type { PbAccounts, PbSession } from './accounts.js';
import { Broker } from './broker.js';
import { pbLoginRoot, UNAUTHORIZED } from './login.js';

const LOGIN_TIMEOUT_MS = 30_000;

export interface PbListener {
  port: number;
  /** Close the port and every connection on it (their sessions end as on a lost link). */
  close(): Promise<void>;
}

export interface PbListenerOptions {
  host: string;
  port: number;
  accounts: PbAccounts;
  throttle: WorkerLoginThrottle;
  log: Logger;
  loginTimeoutMs?: number;
}

export async function startPbListener(opts: PbListenerOptions): Promise<PbListener> {
  const { log, throttle, accounts } = opts;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const address = socket.remoteAddress ?? '';
    const peer = `${address}:${socket.remotePort}`;
    const at = { peer, protocol: 'pb' };
    const broker = new Broker({
      isClient: false,
      send: (b) => {
        if (!socket.destroyed) socket.write(b);
      },
      close: () => socket.destroy(),
      log: (line) => log.warn(at, line),
    });
    const session: PbSession = {
      peer,
      address,
      broker,
      transport: {
        pause: () => socket.pause(),
        resume: () => socket.resume(),
        close: () => socket.destroy(),
      },
    };
    let attached = false;
    const loginTimer = setTimeout(() => {
      log.warn(at, 'PB connection closed: no login within the time allowed');
      socket.destroy();
    }, opts.loginTimeoutMs ?? LOGIN_TIMEOUT_MS);
    broker.setNamed(
      'root',
      pbLoginRoot({
        password: (user) => {
          if (!throttle.allowed(user, address)) {
            log.warn({ ...at, user }, 'PB login refused: too many failed logins');
            socket.destroy();
            throw UNAUTHORIZED;
          }
          return accounts.get(user)?.password();
        },
        refused: (user, why) => {
          throttle.failed(user, address);
          log.warn({ ...at, user }, `PB login refused: ${why}`);
        },
        loggedIn: async (user, mind) => {
          throttle.succeeded(user, address);
          const account = accounts.get(user);
          if (!account) throw UNAUTHORIZED;
          const perspective = await account.attach(user, mind, session);
          clearTimeout(loginTimer);
          if (!attached && account.detach) broker.onDisconnect(() => account.detach?.(user, session));
          attached = true;
          return perspective;
        },
      }),
    );
    socket.on('data', (b: Buffer) => broker.receive(b));
    socket.on('close', () => {
      clearTimeout(loginTimer);
      sockets.delete(socket);
      broker.connectionLost();
    });
    socket.on('error', (err) => log.debug({ ...at, err: err.message }, 'PB socket error'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
