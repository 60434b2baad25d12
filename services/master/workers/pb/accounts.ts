// Who may log in on a PB port, by username: Buildbot's pbmanager registers each user of a port
// (its workers, and the PBChangeSource and Try_Userpass users, which share the workers' port
// when they name none) with a password and what to make of a good login
// (buildbot/pbmanager.py, Dispatcher). Flotilla does the same: one PbAccounts per PB port,
// passed to its listener (./listener.ts); each kind of user is registered by its own file
// (./workers.ts for the configured workers) with add(), which refuses a username already
// taken on that port, as Buildbot's pbmanager does.
import type { Broker, LocalObject, RemoteReference } from './broker.js';
import type { PbTransport } from './connection.js';
import { PbProtocolError } from './errors.js';

/** One logged-in PB connection, as an account's attach sees it. */
export interface PbSession {
  /** `address:port` of the client, for log lines. */
  readonly peer: string;
  /** The client's address (what login throttling counts). */
  readonly address: string;
  readonly broker: Broker;
  /** Pause, resume and close the TCP link. */
  readonly transport: PbTransport;
}

export interface PbAccount {
  /** What logs in with it, for the master's log lines ("worker", "change source", "try"). */
  readonly kind: string;
  /** The password its client answers the challenge with (read at each login). */
  password(): string;
  /**
   * After a good response: the perspective the client gets, given its mind (the object the
   * client passed to respond). A RemoteFailure thrown here is the client's answer (Buildbot
   * refuses a duplicate worker with `builtins.RuntimeError`); the connection stays up unless
   * the account closes it. Runs inside the client's login call, as Buildbot's requestAvatar.
   */
  attach(
    username: string,
    mind: RemoteReference | null,
    session: PbSession,
  ): LocalObject | Promise<LocalObject>;
  /** The session ended (the connection closed) after a good attach. */
  detach?(username: string, session: PbSession): void;
}

export class PbAccounts {
  private readonly byName = new Map<string, PbAccount>();

  /** Register `username`; answers a function that removes it again (a reconfiguration). */
  add(username: string, account: PbAccount): () => void {
    const taken = this.byName.get(username);
    if (taken)
      throw new PbProtocolError(
        'PB_ACCOUNT_TAKEN',
        `${JSON.stringify(username)} (${taken.kind}, ${account.kind})`,
      );
    this.byName.set(username, account);
    return () => {
      if (this.byName.get(username) === account) this.byName.delete(username);
    };
  }

  get(username: string): PbAccount | undefined {
    return this.byName.get(username);
  }
}
