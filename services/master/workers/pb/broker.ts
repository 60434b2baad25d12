// Perspective Broker's broker: the message layer over jelly (twisted/spread/pb.py, Broker;
// flavors.py, Referenceable and RemoteReference), transport-agnostic: bytes come in through
// receive(), go out through `send`, and a refusal closes through `close`.
//
// What the wire holds (every form is in test/fixtures/pb/session.json):
// - The server opens with the dialects `['pb', 'none']`; the client answers `'pb'`; then each
//   side sends `['version', 6]` (a different version is refused, as Twisted's ProtocolError).
// - `['message', requestId, objectId, method, answerRequired, args, kwargs]` calls `method` on
//   an object of the receiver's: objectId is a luid it handed out, or a name (`root`). Request
//   ids and luids count from 1 on each side. The answer is `['answer', requestId, result]` or
//   `['error', requestId, failure]`. A method the object lacks is answered, as Twisted does,
//   with a CopyableFailure of `twisted.spread.flavors.NoSuchMethod`; an unknown object with
//   pb's `Error('Invalid Object ID')`; arguments of a type outside the jelly subset with
//   `InsecureJelly` (the connection stays, as in Twisted).
// - Sending one of our objects as `['remote', luid]` counts a reference to it; the peer sends
//   `['decref', luid]` for each when it drops them, and the object is forgotten at zero.
//   A reference to the peer's object is released explicitly here (JavaScript has no
//   destructor to do it as Twisted's `__del__` does): release() sends one decref per time the
//   reference was received.
// - An unknown command is answered `['didNotUnderstand', command]`; one received is logged.
// - An answer to no pending call, a decref or `local` of an object not held, cache messages
//   (Buildbot uses no Cacheable) and a malformed message end the connection, as the KeyError
//   or ProtocolError they raise in Twisted does.
// - Connection loss rejects every pending call with PB_CONNECTION_LOST (Twisted's
//   PBConnectionLost) and runs the disconnect notifications.
// Twisted keeps at most 1024 local objects per broker (MAX_BROKER_REFS); Flotilla keeps the
// same bound on local objects and on the peer's references it holds.
import { BANANA_LIMITS, BananaDecoder, type BananaItem, encodeBanana, SERVER_DIALECTS } from './banana.js';
import { PbProtocolError } from './errors.js';
import {
  dict,
  type JellyKey,
  type JellyRefs,
  type JellyValue,
  jelly,
  type PbReference,
  RemoteFailure,
  Tuple,
  unjelly,
} from './jelly.js';

export const PB_VERSION = 6;
export const MAX_BROKER_REFS = 1024;

export type RemoteMethod = (
  args: JellyValue[],
  kwargs: Map<JellyKey, JellyValue>,
) => JellyValue | Promise<JellyValue>;

/** One of our objects the peer may call (a Twisted Referenceable): its `remote_*` methods. */
export class LocalObject implements PbReference {
  readonly pbReference = true;
  constructor(
    /** Its Python-like name, for NoSuchMethod's text. */
    readonly name: string,
    readonly methods: Record<string, RemoteMethod>,
  ) {}
}

/** A reference to an object of the peer's. */
export class RemoteReference implements PbReference {
  readonly pbReference = true;
  /** How many times the peer sent it: each is one decref owed. */
  received = 0;
  constructor(
    private readonly broker: Broker,
    readonly id: number | string,
  ) {}

  callRemote(method: string, ...args: JellyValue[]): Promise<JellyValue> {
    return this.broker.call(this, method, args, new Map());
  }

  callRemoteKw(method: string, args: JellyValue[], kwargs: Record<string, JellyValue>): Promise<JellyValue> {
    return this.broker.call(this, method, args, dict(kwargs));
  }

  /** Tell the peer we dropped it (one decref per time received). */
  release(): void {
    this.broker.release(this);
  }
}

const sym = (s: string) => Buffer.from(s, 'latin1');
const text = (b: BananaItem | undefined) =>
  b instanceof Uint8Array ? Buffer.from(b).toString('utf8') : undefined;

export interface BrokerOptions {
  /** The server speaks first (the dialect list); Flotilla's master is the server. */
  isClient: boolean;
  send(bytes: Buffer): void;
  /** End the connection; `err` when this side refused what it received. */
  close(err: PbProtocolError): void;
  log?(line: string): void;
}

interface Pending {
  resolve(v: JellyValue): void;
  reject(e: unknown): void;
}

export class Broker {
  private readonly decoder: BananaDecoder;
  private dialect = false;
  private nextRequest = 1;
  private nextLuid = 1;
  private readonly pending = new Map<number, Pending>();
  /** luid or name -> our object and how many references the peer holds. */
  private readonly locals = new Map<number | string, { object: LocalObject; refs: number }>();
  private readonly luids = new Map<LocalObject, number>();
  private readonly remotes = new Map<number, RemoteReference>();
  private readonly disconnects: (() => void)[] = [];
  private lost: PbProtocolError | null = null;
  private readonly refs: JellyRefs = {
    remote: (id) => this.remoteFor(id),
    local: (id) => {
      const l = this.locals.get(id);
      if (!l) throw new PbProtocolError('PB_BROKER_UNKNOWN_OBJECT', `local ${id}`);
      return l.object;
    },
    out: (ref) => {
      if (ref instanceof LocalObject) return [sym('remote'), this.register(ref)];
      if (ref instanceof RemoteReference && typeof ref.id === 'number') return [sym('local'), ref.id];
      throw new PbProtocolError('PB_BANANA_UNENCODABLE', 'a reference this broker cannot send');
    },
  };

  constructor(private readonly o: BrokerOptions) {
    this.decoder = new BananaDecoder((item) => this.expression(item), BANANA_LIMITS);
    if (!o.isClient)
      this.write(
        SERVER_DIALECTS.map((d) => sym(d)),
        true,
      );
  }

  /** Name one of our objects (`root`), callable by the peer without a reference. */
  setNamed(name: string, object: LocalObject): void {
    this.locals.set(name, { object, refs: 1 });
  }

  /** The peer's named object (`root`). */
  remoteForName(name: string): RemoteReference {
    return new RemoteReference(this, name);
  }

  onDisconnect(f: () => void): void {
    this.disconnects.push(f);
  }

  get connected(): boolean {
    return this.lost === null;
  }

  /** How many of our objects the peer holds references to (for tests and limits). */
  get localCount(): number {
    return this.luids.size;
  }

  /** Bytes from the peer. A refusal closes the connection; nothing is thrown. */
  receive(chunk: Uint8Array): void {
    if (this.lost) return;
    try {
      this.decoder.push(chunk);
    } catch (err) {
      const e =
        err instanceof PbProtocolError
          ? err
          : new PbProtocolError('PB_BROKER_MALFORMED', (err as Error).message);
      this.o.log?.(`PB connection refused input: ${e.code}: ${e.message}`);
      this.o.close(e);
      this.connectionLost();
    }
  }

  /** The transport closed: pending calls fail, notifications run. */
  connectionLost(): void {
    if (this.lost) return;
    this.lost = new PbProtocolError('PB_CONNECTION_LOST');
    for (const p of this.pending.values()) p.reject(this.lost);
    this.pending.clear();
    for (const f of this.disconnects.splice(0)) f();
  }

  call(
    ref: RemoteReference,
    method: string,
    args: JellyValue[],
    kwargs: Map<JellyKey, JellyValue>,
  ): Promise<JellyValue> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextRequest++;
    let message: BananaItem;
    try {
      const target = typeof ref.id === 'number' ? ref.id : sym(ref.id);
      const a = jelly(new Tuple(...args), this.refs);
      message = [sym('message'), id, target, sym(method), 1, a, jelly(kwargs, this.refs)];
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write(message);
    });
  }

  release(ref: RemoteReference): void {
    if (typeof ref.id !== 'number' || this.remotes.get(ref.id) !== ref) return;
    this.remotes.delete(ref.id);
    if (!this.lost) for (let i = 0; i < ref.received; i++) this.write([sym('decref'), ref.id]);
    ref.received = 0;
  }

  /** Messages written before the dialect is chosen go after it (Twisted's client cannot call that early). */
  private readonly held: BananaItem[] = [];

  private write(item: BananaItem, negotiation = false): void {
    if (this.lost) return;
    if (!this.dialect && !negotiation) {
      this.held.push(item);
      return;
    }
    this.o.send(encodeBanana(item, this.dialect));
  }

  private register(object: LocalObject): number {
    let luid = this.luids.get(object);
    if (luid === undefined) {
      if (this.luids.size >= MAX_BROKER_REFS)
        throw new PbProtocolError('PB_BROKER_TOO_MANY_REFS', 'local objects');
      luid = this.nextLuid++;
      this.luids.set(object, luid);
      this.locals.set(luid, { object, refs: 0 });
    }
    const l = this.locals.get(luid) as { refs: number };
    l.refs++;
    return luid;
  }

  private remoteFor(id: number): RemoteReference {
    let r = this.remotes.get(id);
    if (!r) {
      if (this.remotes.size >= MAX_BROKER_REFS)
        throw new PbProtocolError('PB_BROKER_TOO_MANY_REFS', 'remote references');
      r = new RemoteReference(this, id);
      this.remotes.set(id, r);
    }
    r.received++;
    return r;
  }

  private expression(item: BananaItem): void {
    if (!this.dialect) {
      this.negotiate(item);
      return;
    }
    if (!Array.isArray(item) || !(item[0] instanceof Uint8Array))
      throw new PbProtocolError('PB_BROKER_MALFORMED', 'not a command list');
    const command = Buffer.from(item[0]).toString('latin1');
    const rest = item.slice(1);
    switch (command) {
      case 'version':
        if (rest[0] !== PB_VERSION) throw new PbProtocolError('PB_BROKER_VERSION', String(rest[0]));
        return;
      case 'message': {
        this.message(rest);
        return;
      }
      case 'answer':
      case 'error': {
        this.answer(command, rest);
        return;
      }
      case 'decref': {
        this.decref(rest[0]);
        return;
      }
      case 'didNotUnderstand':
        this.o.log?.(`PB peer did not understand ${text(rest[0]) ?? '?'}`);
        return;
      case 'cachemessage':
      case 'decache':
      case 'uncache':
        throw new PbProtocolError('PB_BROKER_UNKNOWN_OBJECT', `${command}: Flotilla holds no cached objects`);
      default:
        this.write([sym('didNotUnderstand'), sym(command.slice(0, 80))]);
    }
  }

  private negotiate(item: BananaItem): void {
    if (this.o.isClient) {
      if (!Array.isArray(item) || !item.some((d) => text(d) === 'pb'))
        throw new PbProtocolError('PB_BROKER_DIALECT', 'the server does not offer pb');
      this.write(sym('pb'), true);
    } else if (text(item) !== 'pb') {
      throw new PbProtocolError(
        'PB_BROKER_DIALECT',
        Array.isArray(item) ? 'a list' : (text(item) ?? String(item)),
      );
    }
    this.dialect = true;
    this.decoder.vocab = true;
    this.write([sym('version'), PB_VERSION]);
    for (const item of this.held.splice(0)) this.write(item);
  }

  private message(rest: BananaItem[]): void {
    const [requestId, objectId, method, answerRequired, args, kwargs] = rest;
    if (rest.length !== 6 || typeof requestId !== 'number' || !(method instanceof Uint8Array))
      throw new PbProtocolError('PB_BROKER_MALFORMED', 'message');
    const name = Buffer.from(method).toString('utf8');
    const answer = answerRequired !== 0;
    const fail = (f: RemoteFailure) => {
      if (answer) this.write([sym('error'), requestId, jelly(f, this.refs)]);
    };
    const key = typeof objectId === 'number' ? objectId : text(objectId);
    const target = key === undefined ? undefined : this.locals.get(key)?.object;
    if (!target) {
      fail(new RemoteFailure('twisted.spread.pb.Error', 'Invalid Object ID', PB_ERROR_PARENTS));
      return;
    }
    let a: JellyValue;
    let kw: JellyValue;
    try {
      a = unjelly(args as BananaItem, this.refs);
      kw = unjelly(kwargs as BananaItem, this.refs);
    } catch (err) {
      if (!(err instanceof PbProtocolError) || !err.code.startsWith('PB_JELLY')) throw err;
      this.o.log?.(`PB call ${name} refused: ${err.code}: ${err.message}`);
      fail(new RemoteFailure('twisted.spread.jelly.InsecureJelly', err.message, INSECURE_PARENTS));
      return;
    }
    if (!(a instanceof Tuple) || !(kw instanceof Map))
      throw new PbProtocolError('PB_BROKER_MALFORMED', 'message arguments');
    const f = Object.hasOwn(target.methods, name) ? target.methods[name] : undefined;
    if (!f) {
      this.o.log?.(`PB call to ${target.name}.${name}: no such method`);
      fail(
        new RemoteFailure(
          'twisted.spread.flavors.NoSuchMethod',
          `No such method: remote_${name}`,
          NO_SUCH_METHOD_PARENTS,
        ),
      );
      return;
    }
    void this.run(`${target.name}.${name}`, () => f(a.items, kw), answer ? requestId : undefined);
  }

  /** Run one served call and answer it; nothing it throws escapes. */
  private async run(what: string, f: () => JellyValue | Promise<JellyValue>, requestId: number | undefined) {
    let reply: BananaItem;
    try {
      reply = [sym('answer'), requestId ?? 0, jelly(await f(), this.refs)];
    } catch (err) {
      const failure =
        err instanceof RemoteFailure
          ? err
          : new RemoteFailure('builtins.Exception', err instanceof Error ? err.message : String(err), BASE);
      if (!(err instanceof RemoteFailure)) this.o.log?.(`PB call ${what} failed: ${failure.value}`);
      reply = [sym('error'), requestId ?? 0, jelly(failure, this.refs)];
    }
    if (requestId !== undefined) this.write(reply);
  }

  private answer(command: 'answer' | 'error', rest: BananaItem[]): void {
    const [requestId, value] = rest;
    const p = typeof requestId === 'number' ? this.pending.get(requestId) : undefined;
    if (rest.length !== 2 || !p) throw new PbProtocolError('PB_BROKER_UNKNOWN_ANSWER', String(requestId));
    this.pending.delete(requestId as number);
    const v = unjelly(value as BananaItem, this.refs);
    if (command === 'answer') p.resolve(v);
    else p.reject(v instanceof RemoteFailure ? v : new RemoteFailure('builtins.str', String(v)));
  }

  private decref(luid: BananaItem | undefined): void {
    const l = typeof luid === 'number' ? this.locals.get(luid) : undefined;
    if (!l) throw new PbProtocolError('PB_BROKER_UNKNOWN_OBJECT', `decref ${String(luid)}`);
    if (--l.refs > 0) return;
    this.locals.delete(luid as number);
    this.luids.delete(l.object);
  }
}

const BASE = ['builtins.Exception', 'builtins.BaseException', 'builtins.object'];
const PB_ERROR_PARENTS = ['twisted.spread.pb.Error', ...BASE];
const INSECURE_PARENTS = ['twisted.spread.jelly.InsecureJelly', ...BASE];
const NO_SUCH_METHOD_PARENTS = ['twisted.spread.flavors.NoSuchMethod', 'builtins.AttributeError', ...BASE];
