// The master's PB port (services/master/workers/pb/listener.ts, workers.ts) with the master's
// other worker listeners (listen.ts), over real TCP: a buildbot-worker made by plain
// `create-worker` (PB, its default) logs in with its configured password, is asked its info,
// gets its builders and runs a command through the master's ConnectedWorkers; a wrong password
// and an unknown name get UnauthorizedLogin; a second connection of an attached name is
// refused as Buildbot refuses it, and so is the name on another protocol; a stranger's
// malformed banana, oversize string, unknown jelly type and call to a method that does not
// exist each get Twisted's answer or a closed connection, and one master log line; failed
// logins are counted in the one throttle all worker ports share; a connection that does not
// log in is closed; an attached link that no longer answers is replaced by a new login of its
// name (Buildbot's arbitration), the master hearing of the old one's loss.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { parseMasterConfig } from '../../../../services/core/config/master-config.js';
import type { OutputStream } from '../../../../services/core/protocol/messages.js';
import type { WorkerListeners } from '../../../../services/master/workers/listen.js';
import { WorkerLoginThrottle } from '../../../../services/master/workers/login-throttle.js';
import { PbAccounts } from '../../../../services/master/workers/pb/accounts.js';
import { type BananaItem, encodeBanana } from '../../../../services/master/workers/pb/banana.js';
import { LocalObject } from '../../../../services/master/workers/pb/broker.js';
import type { PbWorkerConnection } from '../../../../services/master/workers/pb/connection.js';
import { dict, RemoteFailure } from '../../../../services/master/workers/pb/jelly.js';
import { startPbListener } from '../../../../services/master/workers/pb/listener.js';
import { registerPbWorkers } from '../../../../services/master/workers/pb/workers.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../../helpers/buildbot-worker.js';
import { capturedLog } from '../../../helpers/log-lines.js';
import type { Running } from '../../../helpers/processes.js';
import { waitFor } from '../../../helpers/wait.js';
import { hello, startListeners } from '../lib.js';
import { pbClient, rawPb } from './client.js';

const captured = capturedLog('info');
let listeners: WorkerListeners;
let root: string;
let worker: Running;
let port: number;

const sym = (s: string) => Buffer.from(s, 'latin1');
/** A master log line whose message contains `text` (and, when given, with these fields). */
const logged = (text: string, fields: Record<string, unknown> = {}) =>
  waitFor(`the master to log "${text}"`, () =>
    captured.lines.some(
      (l) => String(l.msg).includes(text) && Object.entries(fields).every(([k, v]) => l[k] === v),
    ),
  );
async function refusal(p: Promise<unknown>): Promise<RemoteFailure> {
  const err = await p.then(
    () => new Error('it was not refused'),
    (e: unknown) => e,
  );
  if (!(err instanceof RemoteFailure)) throw err;
  return err;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pb-listener-'));
  listeners = await startListeners(
    ['pw', 'other', 'guessed', 'twice'],
    {},
    {
      log: captured.log,
      builders: ['b1', 'b2'],
    },
  );
  port = listeners.ports.pb as number;
  createBuildbotWorker({
    dir: join(root, 'pw'),
    port,
    name: 'pw',
    password: 'ppw',
    protocol: 'pb',
    admin: 'pb admin',
  });
  worker = startBuildbotWorker(join(root, 'pw'));
  await waitFor('the worker to attach', () => listeners.get('pw') !== undefined, { proc: worker });
});
afterAll(async () => {
  await worker?.stop();
  await listeners?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the PB port', () => {
  it('attaches a worker made by plain create-worker, with its builders, and runs its commands', async () => {
    const conn = listeners.get('pw') as PbWorkerConnection;
    expect(conn.protocol).toBe('pb');
    expect(conn.info).toMatchObject({ admin: 'pb admin', version: expect.stringMatching(/^3\.7/) });
    for (const b of ['b1', 'b2']) expect(statSync(join(root, 'pw', b)).isDirectory()).toBe(true);
    const pieces: [OutputStream, string][] = [];
    const end = await conn.run(
      { command: ['sh', '-c', 'echo one; echo two >&2; exit 4'], workdir: 'b1' },
      async (s, t) => {
        pieces.push([s, t]);
      },
    );
    expect(end).toMatchObject({ rc: 4 });
    const text = (stream: OutputStream) => pieces.flatMap(([s, t]) => (s === stream ? [t] : [])).join('');
    expect([text('o'), text('e')]).toEqual(['one\n', 'two\n']);
    await logged('worker connected', { worker: 'pw', protocol: 'pb' });
  });

  it('refuses a wrong password and an unknown name with UnauthorizedLogin, and logs each', async () => {
    const c = await pbClient(port);
    expect((await refusal(c.login('other', 'wrong'))).type).toBe('twisted.cred.error.UnauthorizedLogin');
    expect((await refusal(c.login('nobody', 'x'))).type).toBe('twisted.cred.error.UnauthorizedLogin');
    await logged('PB login refused: wrong password', { user: 'other' });
    await logged('PB login refused: unknown name', { user: 'nobody' });
    c.socket.destroy();
  });

  it('refuses a second connection of an attached name, as Buildbot does, and the name on another protocol', async () => {
    const c = await pbClient(port);
    const f = await refusal(c.login('pw', 'ppw'));
    expect([f.type, f.value]).toEqual(['builtins.RuntimeError', 'rejecting duplicate worker']);
    await logged('worker refused: already connected', { worker: 'pw', protocol: 'pb' });
    c.socket.destroy();
    const ws = new WebSocket(`ws://127.0.0.1:${listeners.ports.flotilla}/worker`);
    ws.on('open', () => ws.send(hello('pw', 'ppw')));
    ws.on('error', () => {});
    expect(await new Promise((r) => ws.on('close', (code) => r(code)))).toBe(4002);
    expect((listeners.get('pw') as PbWorkerConnection).connected).toBe(true);
  });

  it('answers a call to a method that does not exist with NoSuchMethod, and keeps the connection', async () => {
    const c = await pbClient(port);
    const f = await refusal(c.root.callRemote('frobnicate'));
    expect(f.type).toBe('twisted.spread.flavors.NoSuchMethod');
    await logged('PB call to _PortalWrapper.frobnicate: no such method');
    // Still served: a login on the same connection is answered.
    expect((await refusal(c.login('nobody', 'x'))).type).toBe('twisted.cred.error.UnauthorizedLogin');
    c.socket.destroy();
  });

  it('answers an unknown jelly type in a call with InsecureJelly, and keeps the connection', async () => {
    const r = await rawPb(port);
    await waitFor('the dialect list', () => r.received().length > 0);
    r.socket.write(encodeBanana(sym('pb'), false));
    r.socket.write(encodeBanana([sym('version'), 6], true));
    const args = (t: string) => [sym('tuple'), [sym(t), sym('x')]];
    const call = (id: number, a: unknown) =>
      encodeBanana([sym('message'), id, sym('root'), sym('login'), 1, a as never, [sym('dictionary')]], true);
    /** The master's answer or error to request `id`, once it came. */
    const reply = (id: number) =>
      r.items.find((i) => Array.isArray(i) && i[1] === id && /^(answer|error)$/.test(String(i[0])));
    r.socket.write(call(1, args('os.system')));
    const closed = () => r.socket.destroyed && 'the master closed the connection';
    await waitFor('the error answering os.system', () => reply(1) !== undefined, { gaveUp: closed });
    expect(String((reply(1) as BananaItem[])[0])).toBe('error');
    // The failure's class, as Twisted names it (the decoded strings are Buffers: String() joins their text).
    expect(String(reply(1))).toContain('twisted.spread.jelly.InsecureJelly');
    await logged('PB call login refused: PB_JELLY_UNKNOWN_TYPE');
    // Still served: a login on the same connection is answered (with its challenge).
    r.socket.write(call(2, [sym('tuple'), sym('nobody')]));
    await waitFor('the answer to a login on the same connection', () => reply(2) !== undefined, {
      gaveUp: closed,
    });
    expect(String((reply(2) as BananaItem[])[0])).toBe('answer');
    expect(r.socket.destroyed).toBe(false);
    r.socket.destroy();
  });

  it('closes a connection that sends malformed banana, and logs why', async () => {
    const r = await rawPb(port);
    await waitFor('the dialect list', () => r.received().length > 0);
    r.socket.write(Buffer.from([0x01, 0x99]));
    await r.closed;
    await logged('PB connection refused input: PB_BANANA_BAD_TYPE_BYTE');
    const s = await rawPb(port);
    await waitFor('the dialect list', () => s.received().length > 0);
    s.socket.write(encodeBanana(sym('none'), false));
    await s.closed;
    await logged('PB connection refused input: PB_BROKER_DIALECT');
  });

  it('closes a connection that announces an oversize string before reading it, and logs why', async () => {
    const r = await rawPb(port);
    await waitFor('the dialect list', () => r.received().length > 0);
    // 640 KiB + 1 as banana's base-128 prefix, then the string type byte.
    const n = 640 * 1024 + 1;
    r.socket.write(Buffer.from([n & 0x7f, (n >> 7) & 0x7f, (n >> 14) & 0x7f, 0x82]));
    await r.closed;
    await logged('PB connection refused input: PB_BANANA_STRING_TOO_LONG');
    expect((listeners.get('pw') as PbWorkerConnection).connected).toBe(true);
  });

  it('counts failed logins in the throttle every worker port shares', async () => {
    const c = await pbClient(port);
    for (let i = 0; i < 10; i++) await refusal(c.login('guessed', 'wrong'));
    // The next try is not answered: the connection is closed.
    void c.login('guessed', 'pguessed').catch(() => {});
    await c.closed;
    await logged('PB login refused: too many failed logins', { user: 'guessed' });
    // The right password from the same address on msgpack is refused too, before it is checked.
    const status = await new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${listeners.ports.msgpack_experimental_v7}/`, {
        headers: { Authorization: `Basic ${Buffer.from('guessed:pguessed').toString('base64')}` },
      });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      ws.on('error', () => {});
    });
    expect(status).toBe(429);
  });

  it('closes a connection that does not log in within the time allowed, and logs it', async () => {
    // A listener of its own with a short bound: the master's is 30 s.
    const quiet = await startPbListener({
      host: '127.0.0.1',
      port: 0,
      accounts: new PbAccounts(),
      throttle: new WorkerLoginThrottle(),
      log: captured.log,
      loginTimeoutMs: 200,
    });
    onTestFinished(() => quiet.close());
    const r = await rawPb(quiet.port);
    await r.closed;
    await logged('PB connection closed: no login within the time allowed');
  });

  it('refuses a second account of one username on a port', () => {
    const accounts = new PbAccounts();
    const account = { kind: 'worker', password: () => 'x', attach: () => new LocalObject('P', {}) };
    const remove = accounts.add('u', account);
    expect(() => accounts.add('u', { ...account, kind: 'change source' })).toThrow(
      /PB username registered twice/,
    );
    remove();
    expect(accounts.get('u')).toBeUndefined();
  });

  it('replaces an attached link that no longer answers with a new login of its name', async () => {
    // The workers' accounts on a port of their own, with a short ping: the master's is 10 s.
    const accounts = new PbAccounts();
    const throttle = new WorkerLoginThrottle();
    const seen: string[] = [];
    const workers = registerPbWorkers(
      accounts,
      {
        config: parseMasterConfig('workers: [{ name: z, password: pz }]'),
        masterName: 'm',
        log: captured.log,
        events: {
          connected: (w) => seen.push(`connected ${w.name}`),
          disconnected: (w) => seen.push(`disconnected ${w.name}`),
        },
        env: {},
        throttle,
        connectedElsewhere: () => false,
        pbAccounts: accounts,
      },
      { duplicatePingMs: 200 },
    );
    const own = await startPbListener({ host: '127.0.0.1', port: 0, accounts, throttle, log: captured.log });
    onTestFinished(() => own.close());
    const port = own.port;
    /** A worker's mind, as buildbot-worker's: its print stops answering once frozen. */
    const mind = (state: { frozen: boolean }) =>
      new LocalObject('Bot', {
        print: () => (state.frozen ? new Promise<null>(() => {}) : null),
        getWorkerInfo: () => dict({ basedir: '/nowhere' }),
        setBuilderList: () => new Map(),
      });
    const first = { frozen: false };
    const a = await pbClient(port, mind(first));
    await a.login('z', 'pz');
    const old = workers.get('z');
    expect(old?.connected).toBe(true);
    first.frozen = true;
    const b = await pbClient(port, mind({ frozen: false }));
    await b.login('z', 'pz');
    await a.closed;
    expect(old?.connected).toBe(false);
    expect(workers.get('z')).not.toBe(old);
    expect(workers.get('z')?.connected).toBe(true);
    expect(seen).toEqual(['connected z', 'disconnected z', 'connected z']);
    await logged('worker reconnected: its old link did not answer and is closed', { worker: 'z' });
    b.socket.destroy();
  });
});
