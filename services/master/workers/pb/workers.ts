// The configured workers as accounts of a PB port (./accounts.ts), and the workers attached
// through it as the master's ConnectedWorkers, as msgpack's server does for its own
// (../msgpack/server.ts is the model): the same passwords (`password`, `password_env`), one
// connection per worker name whatever the protocol, the same keepalive and handshake bounds.
//
// Inside the worker's login call, as Buildbot's master does before it answers the
// perspective (buildbot/worker/manager.py, newConnection; buildbot/worker/base.py, attached):
// print "attached", getWorkerInfo (with its fallbacks), then setBuilderList with the worker's
// configured builders, each in the directory named as the builder (the worker makes what is
// missing, and deletes leftovers itself when made with --delete-leftover-dirs).
//
// A second login of a name already attached here is arbitrated as Buildbot does: the old
// connection is asked a print; if it answers within DUPLICATE_PING_MS the new login is refused
// with Buildbot's `RuntimeError('rejecting duplicate worker')` (buildbot-worker then exits, as
// against Buildbot), else the old link is closed and the new one is attached. A name being
// attached, or attached by another protocol, is refused the same way.
import { builderDir, workerPassword } from '../../../core/config/master-config.js';
import { withinDeadline } from '../../../core/lifecycle/within.js';
import type { ConnectedWorkers } from '../connection.js';
import { HANDSHAKE_TIMEOUT_MS, KEEPALIVE_MS } from '../msgpack/server.js';
import type { ProtocolContext } from '../protocol.js';
import type { PbAccounts, PbSession } from './accounts.js';
import type { RemoteReference } from './broker.js';
import { PbWorkerConnection } from './connection.js';
import { RemoteFailure } from './jelly.js';

/** Buildbot's WorkerManager.PING_TIMEOUT. */
const DUPLICATE_PING_MS = 10_000;

const DUPLICATE = new RemoteFailure('builtins.RuntimeError', 'rejecting duplicate worker', [
  'builtins.RuntimeError',
  'builtins.Exception',
  'builtins.BaseException',
  'builtins.object',
]);

export interface PbWorkers extends ConnectedWorkers {
  connected(): PbWorkerConnection[];
  get(name: string): PbWorkerConnection | undefined;
}

function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  return withinDeadline(p, ms, () => new Error(`${what} took longer than ${ms} ms`));
}

/** Whether an attached link still answers (Buildbot's arbitration of a duplicate login). */
async function answers(conn: PbWorkerConnection, ms: number): Promise<boolean> {
  try {
    await within(ms, conn.print('master got a duplicate connection'), 'the ping');
    return true;
  } catch {
    return false;
  }
}

/** Register every configured worker on `accounts`; the attached ones are the answer. */
export function registerPbWorkers(
  accounts: PbAccounts,
  ctx: ProtocolContext,
  bounds: { keepaliveMs?: number; duplicatePingMs?: number } = {},
): PbWorkers {
  const keepaliveMs = bounds.keepaliveMs ?? KEEPALIVE_MS;
  const duplicatePingMs = bounds.duplicatePingMs ?? DUPLICATE_PING_MS;
  const { log } = ctx;
  // Replaced by a reloaded configuration (reconfigure below).
  let config = ctx.config;
  const workers = new Map<string, PbWorkerConnection>();
  const sessions = new Map<PbWorkerConnection, PbSession>();
  /** Names between the login and the end of the handshake, with the connection joining. */
  const joining = new Map<string, PbWorkerConnection>();
  const builderDirs = (name: string): [string, string][] =>
    config.builders.filter((b) => b.workers.includes(name)).map((b) => [b.name, builderDir(b)]);

  const attach = async (name: string, mind: RemoteReference | null, session: PbSession) => {
    const at = { worker: name, peer: session.peer, protocol: 'pb' };
    // A worker is called back through its mind; a login without one is not a worker's.
    if (!mind) {
      log.warn(at, 'worker refused: it logged in without a mind');
      throw new RemoteFailure('builtins.RuntimeError', 'a worker must log in with a mind');
    }
    const duplicate = () => {
      log.warn(at, 'worker refused: already connected');
      return DUPLICATE;
    };
    if (joining.has(name) || ctx.connectedElsewhere(name)) throw duplicate();
    // Joining from here: another login of the name while the old link is pinged is refused.
    const conn = new PbWorkerConnection(name, mind, session.transport);
    joining.set(name, conn);
    const leave = () => {
      if (joining.get(name) === conn) joining.delete(name);
    };
    let attached = false;
    let keepalive: NodeJS.Timeout | undefined;
    session.broker.onDisconnect(() => {
      clearInterval(keepalive);
      conn.closed('worker disconnected');
      sessions.delete(conn);
      if (!attached) return leave();
      if (workers.get(name) !== conn) return;
      workers.delete(name);
      log.info({ worker: name, protocol: 'pb' }, 'worker disconnected');
      ctx.events.disconnected?.(conn);
    });
    const old = workers.get(name);
    if (old && (await answers(old, duplicatePingMs))) {
      leave();
      throw duplicate();
    }
    if (old) {
      log.warn(at, 'worker reconnected: its old link did not answer and is closed');
      old.closed('replaced by a new connection of the worker');
      sessions.get(old)?.transport.close('replaced by a new connection of the worker');
      workers.delete(name);
      ctx.events.disconnected?.(old);
    }
    try {
      await within(HANDSHAKE_TIMEOUT_MS, handshake(conn, builderDirs(name)), 'the handshake');
      if (!conn.connected) throw new Error('the worker disconnected');
    } catch (err) {
      leave();
      log.warn({ ...at, err: (err as Error).message }, 'worker refused: handshake failed');
      session.transport.close('handshake failed');
      throw new RemoteFailure('builtins.RuntimeError', `handshake failed: ${(err as Error).message}`);
    }
    let answered = true;
    keepalive = setInterval(() => {
      if (!answered) {
        log.warn(at, 'worker link closed: keepalive unanswered');
        return session.transport.close('keepalive unanswered');
      }
      answered = false;
      conn
        .keepalive()
        .then(() => {
          answered = true;
        })
        .catch(() => {});
    }, keepaliveMs);
    leave();
    attached = true;
    workers.set(name, conn);
    sessions.set(conn, session);
    log.info({ ...at, version: conn.info.version }, 'worker connected');
    ctx.events.connected?.(conn);
    return conn.perspective(() => log.info(at, 'worker asked to shut down: it stops once its builds end'));
  };

  const register = () =>
    config.workers.map((w) =>
      accounts.add(w.name, { kind: 'worker', password: () => workerPassword(w, ctx.env), attach }),
    );
  let registered = register();
  return {
    connected: () => [...workers.values()],
    get: (name) => workers.get(name),
    // The accounts again, from the new list: a connected worker stays until the master lets it go.
    reconfigure: (next) => {
      for (const remove of registered) remove();
      config = next;
      registered = register();
    },
    // The port's listener closes the links; each ends as a lost one.
    close: async () => {},
  };
}

/** What Buildbot's master does between the login and offering the worker builds. */
async function handshake(conn: PbWorkerConnection, builders: [string, string][]): Promise<void> {
  await conn.print('attached');
  const info = await conn.getWorkerInfo();
  if (typeof info.basedir !== 'string' || info.basedir === '')
    throw new Error('the worker reported no basedir');
  const have = new Set(await conn.setBuilderList(builders));
  const missing = builders.filter(([b]) => !have.has(b)).map(([b]) => b);
  if (missing.length) throw new Error(`the worker did not take the builders ${missing.join(', ')}`);
}
