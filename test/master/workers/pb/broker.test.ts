// The PB broker: two brokers talking over an in-memory duplex (pure logic: calls both ways,
// references and their counts, Twisted's error answers, refusals, connection loss), and a
// replay of the start of the recorded Buildbot session, where a Flotilla master-side broker
// sends byte for byte what Buildbot's master sent and reads the real worker's answers.
import { describe, expect, it } from 'vitest';
import { type BananaItem, encodeBanana } from '../../../../services/master/workers/pb/banana.js';
import {
  Broker,
  LocalObject,
  MAX_BROKER_REFS,
  RemoteReference,
} from '../../../../services/master/workers/pb/broker.js';
import type { PbProtocolError } from '../../../../services/master/workers/pb/errors.js';
import {
  dict,
  type JellyKey,
  type JellyValue,
  RemoteFailure,
  Tuple,
} from '../../../../services/master/workers/pb/jelly.js';
import { waitFor } from '../../../helpers/wait.js';
import { expressions, recording } from './recorded.js';

interface End {
  broker: Broker;
  closed: PbProtocolError[];
  sent: Buffer[];
  log: string[];
}

/** A server and a client broker joined by an in-memory duplex (delivery on a later tick). */
function pair(): { server: End; client: End; cut(): void } {
  const mk = (isClient: boolean, deliver: (b: Buffer) => void): End => {
    const end: End = { closed: [], sent: [], log: [], broker: undefined as unknown as Broker };
    end.broker = new Broker({
      isClient,
      send: (b) => {
        end.sent.push(b);
        deliver(b);
      },
      close: (e) => end.closed.push(e),
      log: (l) => end.log.push(l),
    });
    return end;
  };
  let up = true;
  const ends: { server?: End; client?: End } = {};
  // The client first: the server speaks as it is made (the dialect list).
  ends.client = mk(true, (b) => up && setImmediate(() => up && ends.server?.broker.receive(b)));
  ends.server = mk(false, (b) => up && setImmediate(() => up && ends.client?.broker.receive(b)));
  return {
    server: ends.server,
    client: ends.client,
    cut() {
      up = false;
      ends.server?.broker.connectionLost();
      ends.client?.broker.connectionLost();
    },
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => 'resolved',
    (e: unknown) => e,
  );
}

describe('PB broker', () => {
  it('calls both ways, passes references, and counts them', async () => {
    const { server, client } = pair();
    let callback: RemoteReference | undefined;
    const worker = new LocalObject('Worker', {
      print: ([m]) => `printed ${m}`,
    });
    server.broker.setNamed(
      'root',
      new LocalObject('Root', {
        echo: (args, kw) => new Tuple(...args, kw),
        attach: async ([ref]) => {
          callback = ref as RemoteReference;
          return await callback.callRemote('print', 'hello');
        },
        child: () => new LocalObject('Child', { ping: () => 'pong' }),
      }),
    );
    const root = client.broker.remoteForName('root');
    const kw = dict({ a: [1, 2.5, null, true], b: Buffer.from([0, 255]) });
    expect(
      await root.callRemoteKw('echo', ['x', 7n ** 40n], {
        a: kw.get('a') as JellyValue,
        b: kw.get('b') as JellyValue,
      }),
    ).toEqual(new Tuple('x', 7n ** 40n, kw));
    // A reference to the client's object goes to the server, which calls back on it.
    expect(await root.callRemote('attach', worker)).toBe('printed hello');
    expect(client.broker.localCount).toBe(1);
    callback?.release();
    await waitFor('the decref to arrive', () => client.broker.localCount === 0);
    // A reference to the server's object comes back; calling it and releasing it.
    const child = (await root.callRemote('child')) as RemoteReference;
    expect(child).toBeInstanceOf(RemoteReference);
    expect(server.broker.localCount).toBe(1);
    expect(await child.callRemote('ping')).toBe('pong');
    child.release();
    await waitFor('the child to be forgotten', () => server.broker.localCount === 0);
    expect(server.closed).toEqual([]);
    expect(client.closed).toEqual([]);
  });

  it('answers as Twisted does: no such method, no such object, a failed call, arguments outside jelly', async () => {
    const { server, client } = pair();
    server.broker.setNamed(
      'root',
      new LocalObject('Root', {
        boom: () => {
          throw new Error('it broke');
        },
        refuse: () => {
          throw new RemoteFailure('twisted.cred.error.UnauthorizedLogin', '', [
            'twisted.cred.error.UnauthorizedLogin',
          ]);
        },
      }),
    );
    const root = client.broker.remoteForName('root');
    expect(await rejection(root.callRemote('nothing'))).toMatchObject({
      type: 'twisted.spread.flavors.NoSuchMethod',
      value: 'No such method: remote_nothing',
    });
    expect(await rejection(root.callRemote('toString'))).toMatchObject({
      type: 'twisted.spread.flavors.NoSuchMethod',
    });
    expect(await rejection(client.broker.remoteForName('other').callRemote('x'))).toMatchObject({
      type: 'twisted.spread.pb.Error',
      value: 'Invalid Object ID',
    });
    expect(await rejection(root.callRemote('boom'))).toMatchObject({
      type: 'builtins.Exception',
      value: 'it broke',
    });
    expect(server.log).toContain('PB call Root.boom failed: it broke');
    expect(await rejection(root.callRemote('refuse'))).toMatchObject({
      type: 'twisted.cred.error.UnauthorizedLogin',
    });
    // A message whose arguments hold a type outside the subset: InsecureJelly, the connection stays.
    const bad = encodeBanana(
      [
        Buffer.from('message'),
        99,
        Buffer.from('root'),
        Buffer.from('boom'),
        1,
        [Buffer.from('tuple'), [Buffer.from('instance'), 1]],
        [Buffer.from('dictionary')],
      ],
      true,
    );
    const before = server.sent.length;
    server.broker.receive(bad);
    expect(server.sent.length).toBe(before + 1);
    expect(server.broker.connected).toBe(true);
    expect(server.log.some((l) => l.includes('PB_JELLY_UNKNOWN_TYPE'))).toBe(true);
  });

  it('closes on what Twisted drops the connection for, and answers unknown commands', async () => {
    const refused = async (item: BananaItem | Buffer) => {
      const { server, client } = pair();
      await client.broker
        .remoteForName('root')
        .callRemote('x')
        .catch(() => {});
      server.broker.receive(Buffer.isBuffer(item) ? item : encodeBanana(item, true));
      return server.closed[0]?.code ?? (server.broker.connected ? 'open' : 'closed');
    };
    const s = (x: string) => Buffer.from(x);
    expect(await refused([s('answer'), 77, [s('None')]])).toBe('PB_BROKER_UNKNOWN_ANSWER');
    expect(await refused([s('decref'), 5])).toBe('PB_BROKER_UNKNOWN_OBJECT');
    expect(await refused([s('version'), 5])).toBe('PB_BROKER_VERSION');
    expect(await refused([s('cachemessage'), 1, 1, s('x'), 1, [s('tuple')], [s('dictionary')]])).toBe(
      'PB_BROKER_UNKNOWN_OBJECT',
    );
    expect(await refused(encodeBanana(s('not a list'), true))).toBe('PB_BROKER_MALFORMED');
    expect(await refused(Buffer.from([1, 0x88]))).toBe('PB_BANANA_BAD_TYPE_BYTE');
    expect(await refused(Buffer.from([1, 0x80, 1, 0x80, 3, 0x82]))).toBe('open'); // half an expression waits
    const { server } = pair();
    server.broker.receive(encodeBanana(Buffer.from('none'), false));
    expect(server.closed[0]?.code).toBe('PB_BROKER_DIALECT');
    const other = pair();
    await other.client.broker
      .remoteForName('root')
      .callRemote('x')
      .catch(() => {});
    const n = other.server.sent.length;
    other.server.broker.receive(encodeBanana([s('frobnicate'), 1], true));
    expect(other.server.sent.length).toBe(n + 1);
    expect(
      other.server.sent.at(-1)?.equals(encodeBanana([s('didNotUnderstand'), s('frobnicate')], true)),
    ).toBe(true);
    expect(other.server.broker.connected).toBe(true);
  });

  it('fails pending calls and runs disconnect notifications when the connection goes', async () => {
    const { server, client, cut } = pair();
    let answer: (v: JellyValue) => void = () => {};
    server.broker.setNamed('root', new LocalObject('Root', { wait: () => new Promise((r) => (answer = r)) }));
    const lost: string[] = [];
    client.broker.onDisconnect(() => lost.push('client'));
    const call = client.broker.remoteForName('root').callRemote('wait');
    await waitFor('the call to arrive', () => server.sent.length >= 2 && client.sent.length >= 3);
    cut();
    expect(await rejection(call)).toMatchObject({ code: 'PB_CONNECTION_LOST' });
    expect(lost).toEqual(['client']);
    expect(await rejection(client.broker.remoteForName('root').callRemote('wait'))).toMatchObject({
      code: 'PB_CONNECTION_LOST',
    });
    answer(null); // an answer after the loss goes nowhere and throws nothing
  });

  it('keeps at most Twisted’s 1024 local objects', async () => {
    const { server, client } = pair();
    server.broker.setNamed(
      'root',
      new LocalObject('Root', {
        many: () => Array.from({ length: MAX_BROKER_REFS + 1 }, () => new LocalObject('X', {})),
      }),
    );
    expect(await rejection(client.broker.remoteForName('root').callRemote('many'))).toMatchObject({
      type: 'builtins.Exception',
    });
    expect(server.log.some((l) => l.includes('more references than the broker keeps'))).toBe(true);
  });

  it('replays the recorded session: sends what Buildbot’s master sent, and reads the worker’s answers', async () => {
    const r = recording('session');
    const workerSaid = expressions(r, 'worker');
    const masterSaid = expressions(r, 'master');
    const sent: Buffer[] = [];
    const closed: PbProtocolError[] = [];
    const master = new Broker({ isClient: false, send: (b) => sent.push(b), close: (e) => closed.push(e) });
    // What Buildbot's master serves before the build: a login that hands out a challenger,
    // whose respond() gives the perspective (here with the methods the worker may call).
    const perspective = new LocalObject('Perspective', { keepalive: () => null });
    let mind: RemoteReference | undefined;
    const challenger = new LocalObject('Challenger', {
      respond: (args) => {
        mind = args[1] as RemoteReference;
        return perspective;
      },
    });
    master.setNamed(
      'root',
      new LocalObject('Root', { login: () => new Tuple(Buffer.alloc(16), challenger) }),
    );
    const feed = (n: number) => master.receive(encodeBanana(workerSaid[n] as BananaItem, n > 0));
    // The worker's dialect, version and login; once answered, its respond and its decref of
    // the challenger (the worker waits for each answer, as here).
    for (let n = 0; n < 3; n++) feed(n);
    await waitFor('the login to be answered', () => sent.length >= 3);
    for (let n = 3; n < 5; n++) feed(n);
    await waitFor('the perspective to be handed out', () => mind !== undefined && sent.length >= 4);
    const calls = [
      mind?.callRemoteKw('print', [], { message: 'attached' }),
      mind?.callRemote('getWorkerInfo'),
      mind?.callRemote('setBuilderList', [new Tuple('b1', 'b1')]),
    ];
    // Byte for byte what Buildbot's master sent: dialects, version, login's answer (but for its
    // random challenge), the three calls, and the answer to respond.
    const expected = masterSaid.map((m, n) => encodeBanana(m, n > 0));
    const challengeFree = (b: Buffer) =>
      Buffer.from(
        b
          .toString('latin1')
          .replace(/\x10\x82[\s\S]{16}/, '')
          .toString(),
        'latin1',
      );
    expect(sent[0]?.equals(expected[0] as Buffer)).toBe(true);
    expect(sent[1]?.equals(expected[1] as Buffer)).toBe(true);
    expect(challengeFree(sent[2] as Buffer).equals(challengeFree(expected[2] as Buffer))).toBe(true);
    // Buildbot answered respond after its calls (and a second print); Flotilla answers it first.
    expect(
      sent
        .slice(3, 7)
        .map((b) => b.toString('hex'))
        .sort(),
    ).toEqual(
      [expected[3], expected[4], expected[5], expected[7]].map((b) => (b as Buffer).toString('hex')).sort(),
    );
    // The worker's answers to those calls resolve them.
    const answers = workerSaid
      .slice(5)
      .filter((m) => Buffer.from((m as BananaItem[])[0] as Uint8Array).toString() === 'answer');
    for (const a of answers.slice(0, 3)) master.receive(encodeBanana(a, true));
    const [printed, info, builders] = await Promise.all(calls);
    expect(printed).toBeNull();
    expect((info as Map<JellyKey, JellyValue>).get('host')).toBe('fixture host\n');
    expect((builders as Map<JellyKey, JellyValue>).get('b1')).toBeInstanceOf(RemoteReference);
    expect(master.localCount).toBe(1); // the perspective; the challenger was decref'd
    expect(closed).toEqual([]);
  });
});
