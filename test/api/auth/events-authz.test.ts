// Review issue 13, finding 3 (medium): events must fail closed. While the builder of a build, step
// or log was not yet known to the authorizer, its events went out: with a view rule keeping
// `deploy` (and secret*) to admins, a developer's /ws received `builds/N/new` of a deploy build,
// its step events and the first `logs/N/lines` batch, and a replay with `since` handed over the
// same. Now an event is authorized by the same decision REST makes for the same path, awaited,
// never assumed.
//
// The test drives every kind of event (build, step, log, log lines, build request, build
// set, change, worker) for a builder everyone may read and for one only admins may, through
// the data operations a master uses, on a fresh pod (nothing cached). Every event the admin
// receives, the developer and an anonymous client must receive exactly when REST lets them
// read its path: live, and replayed with `since`.
//
// The last block: authorization of events end to end, on the app as service.ts builds it: a
// session cookie on the websocket's upgrade request names the user (the session hook), the
// events plugin takes that user, and the configured rules decide which events reach each
// socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addBuildset,
  addChange,
  addLog,
  appendLog,
  newBuild,
  newStep,
  transact,
  workerConnected,
} from '../../../services/core/data/index.js';
import { publish } from '../../../services/core/events/bus.js';
import { lastEventId } from '../../../services/core/events/stream.js';
import { appendToLogStream } from '../../../services/core/logs/live-stream.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { listenOn } from '../../helpers/api.js';
import { waitFor } from '../../helpers/wait.js';
import { useRedis, WsClient } from '../events/lib.js';
import { BUILDERS, ReviewStack } from '../lib/review-stack.js';
import { AuthApp, testHash } from './lib.js';

const suiteRedis = useRedis();
let redis: Redis;
let stack: ReviewStack;
let ws: string;
const sessions: Record<'admin' | 'dev' | 'anonymous', string | null> = {
  admin: null,
  dev: null,
  anonymous: null,
};
beforeAll(async () => {
  redis = createRedis(suiteRedis.url, 'events-authz');
  stack = await ReviewStack.start({ redis });
  ws = `${(await stack.listen()).replace('http', 'ws')}/ws`;
  sessions.admin = await stack.login('admin');
  sessions.dev = await stack.login('dev');
});
afterAll(async () => {
  for (const p of pods) await p.close();
  await stack?.close();
  redis?.disconnect();
});

const ctx = () => ({ db: stack.db.pool, redis });
const MASTER = 1;
const WORKER = 2;

// Wildcards of every length a routing key has: together they match every event.
const EVERYTHING = Array.from({ length: 8 }, (_, i) =>
  Array(i + 2)
    .fill('*')
    .join('/'),
);

async function client(who: keyof typeof sessions, url = ws): Promise<WsClient> {
  const s = sessions[who];
  return WsClient.open(url, s ? { headers: { cookie: `TWISTED_SESSION=${s}` } } : {});
}

/** Another API pod on the same database and Redis: nothing it decides about is cached yet. */
async function freshPod(): Promise<string> {
  // Same database, Redis and key prefix as the first: another pod of one deployment.
  const pod = await ReviewStack.start({ db: stack.db, redis, keyPrefix: stack.keyPrefix });
  pods.push(pod);
  return `${(await pod.listen()).replace('http', 'ws')}/ws`;
}
const pods: ReviewStack[] = [];

interface Made {
  logid: number;
}

/** A build set, request, build, step and log (with a line) on one builder, as a master makes them. */
async function buildOn(builderid: number): Promise<Made> {
  return transact(ctx(), async (tx) => {
    const { brids } = await addBuildset(tx, {
      sourcestamps: [{ codebase: '', repository: '', branch: 'main', revision: null, project: '' }],
      scheduler: 'events-test',
      reason: 'events test',
      builderids: [builderid],
    });
    const { buildid } = await newBuild(tx, {
      builderid,
      buildrequestid: brids[builderid]!,
      workerid: WORKER,
      masterid: MASTER,
    });
    const { stepid } = await newStep(tx, buildid, 'compile');
    const logid = await addLog(tx, stepid, 'stdio', 's');
    await appendLog(tx, logid, 'first line\n');
    return { logid };
  });
}

const restPath = (key: string) => `/api/v2/${key.split('/').slice(0, -1).join('/')}`;

/** Whether REST lets `who` read the path an event's key names (403 is the only refusal). */
async function restAllows(who: keyof typeof sessions, key: string): Promise<boolean> {
  const s = sessions[who];
  const a = await stack.get(restPath(key), s ? { session: s } : {});
  expect([200, 403, 404], `${who} GET ${restPath(key)}`).toContain(a.status);
  return a.status !== 403;
}

/** Every key `c` received that the admin also received, and those `who` should have. */
async function compare(admin: WsClient, c: WsClient, who: keyof typeof sessions, extra: string[] = []) {
  const all = [...new Set([...admin.events.map((e) => e.k as string), ...extra])];
  const got = new Set(c.events.map((e) => e.k as string));
  const expected: string[] = [];
  for (const k of all) if (await restAllows(who, k)) expected.push(k);
  expect([...got].filter((k) => all.includes(k)).sort()).toEqual(expected.sort());
  return { expected, refused: all.filter((k) => !expected.includes(k)) };
}

describe('events of every kind reach a client exactly when REST lets it read their path', () => {
  let since: string;
  let open: Made;
  let secret: Made;
  let admin: WsClient;
  let dev: WsClient;
  let anon: WsClient;
  let marker: number;

  it('live', async () => {
    // Where a replay starts: just after an event that comes before the scenario.
    await publish(redis, ['masters', MASTER, 'started'], {});
    since = (await lastEventId(redis))!;
    [admin, dev, anon] = [await client('admin'), await client('dev'), await client('anonymous')];
    for (const c of [admin, dev, anon]) for (const p of EVERYTHING) await c.subscribe(p);
    // The secret builder first: its events meet the coldest caches.
    secret = await buildOn(BUILDERS.deploy);
    open = await buildOn(BUILDERS.runtests);
    await transact(ctx(), (tx) => workerConnected(tx, WORKER, MASTER, {}));
    marker = await transact(ctx(), (tx) => addChange(tx, { author: 'events test', comments: 'marker' }));
    const markerKey = `changes/${marker}/new`;
    for (const c of [admin, dev, anon])
      await waitFor(`the marker event (${markerKey})`, () => c.events.some((e) => e.k === markerKey), {
        everyMs: 5,
        timeoutMs: 10_000,
        gaveUp: c.gone,
      });

    const devSide = await compare(admin, dev, 'dev');
    const anonSide = await compare(admin, anon, 'anonymous');
    // The scenario shows both sides of the rule, for every kind of event.
    for (const kind of ['builds', 'steps', 'logs', 'buildrequests', 'buildsets', 'builders']) {
      expect(
        devSide.refused.some((k) => k.startsWith(`${kind}/`)),
        `a refused ${kind} event`,
      ).toBe(true);
      expect(
        devSide.expected.some((k) => k.startsWith(`${kind}/`)),
        `an allowed ${kind} event`,
      ).toBe(true);
    }
    expect(devSide.expected).toContain(markerKey);
    // A worker's event carries its configured_on, every builder's id: as /workers, only for
    // whoever may read every builder.
    expect(devSide.refused).toContain(`workers/${WORKER}/connected`);
    expect(anonSide.refused.length).toBeGreaterThan(0);
  });

  it('log lines', async () => {
    const lines = (m: Made) => `logs/${m.logid}/lines`;
    for (const c of [admin, dev, anon]) c.close();
    const url = await freshPod();
    [admin, dev, anon] = [
      await client('admin', url),
      await client('dev', url),
      await client('anonymous', url),
    ];
    const everyone = await buildOn(BUILDERS.package);
    const logs = [secret, open, everyone];
    for (const c of [admin, dev, anon]) for (const m of logs) await c.subscribe(lines(m));
    // One log after the other, the last one everybody may read: once a client has its
    // lines, it has been told (or not) about the others'.
    for (const m of logs) {
      await appendToLogStream(redis, m.logid, 1, 'a line\n');
      await waitFor('the lines at the admin', () => admin.events.some((e) => e.k === lines(m)), {
        everyMs: 5,
        timeoutMs: 10_000,
      });
    }
    for (const c of [dev, anon])
      await waitFor('the last lines', () => c.events.some((e) => e.k === lines(everyone)), {
        everyMs: 5,
        timeoutMs: 10_000,
      });
    for (const [c, who] of [
      [dev, 'dev'],
      [anon, 'anonymous'],
    ] as const) {
      const got = c.events.filter((e) => e.k.endsWith('/lines')).map((e) => e.k as string);
      const want: string[] = [];
      for (const m of logs) if (await restAllows(who, lines(m))) want.push(lines(m));
      expect(got.sort()).toEqual(want.sort());
      expect(got).not.toContain(lines(secret));
    }
    expect(dev.events.map((e) => e.k)).toContain(lines(open));
    for (const c of [admin, dev, anon]) c.close();
  });

  it('replayed with since', async () => {
    const url = await freshPod();
    const [a, d, n] = [await client('admin', url), await client('dev', url), await client('anonymous', url)];
    try {
      for (const c of [a, d, n]) for (const p of EVERYTHING) await c.subscribe(p, { since });
      const markerKey = `changes/${marker}/new`;
      for (const c of [a, d, n])
        await waitFor('the replayed marker', () => c.events.some((e) => e.k === markerKey), {
          everyMs: 5,
          timeoutMs: 10_000,
        });
      expect(a.events.length).toBeGreaterThan(20);
      const devSide = await compare(a, d, 'dev');
      expect(devSide.refused.some((k) => k.startsWith('builds/'))).toBe(true);
      await compare(a, n, 'anonymous');
    } finally {
      for (const c of [a, d, n]) c.close();
    }
  });
});

describe('REST, whose decision the events follow', () => {
  it('a list spanning builders is read only by who may read every builder it spans', async () => {
    // Before, the first view rule matching "some builder" decided: the developer's rule let
    // them list every build, deploy's included.
    const dev = sessions.dev!;
    for (const path of ['/builds', '/buildrequests', '/buildsets', '/builders']) {
      expect((await stack.get(`/api/v2${path}`, { session: dev })).status, path).toBe(403);
      expect((await stack.get(`/api/v2${path}`, { session: sessions.admin! })).status, path).toBe(200);
    }
    expect((await stack.get(`/api/v2/builders/${BUILDERS.runtests}/builds`, { session: dev })).status).toBe(
      200,
    );
    expect((await stack.get(`/api/v2/builders/${BUILDERS.deploy}/builds`, { session: dev })).status).toBe(
      403,
    );
    expect((await stack.get('/api/v2/changes', { session: dev })).status).toBe(200);
  });
});

describe('a session cookie on the upgrade request names the user whose rules apply', () => {
  let api: AuthApp;
  let ws: string;
  beforeAll(async () => {
    api = await AuthApp.start({
      auth: {
        users: [{ username: 'alice', password_hash: await testHash('a'), groups: ['ops'] }],
        role_matchers: [{ role: 'ops', groups: ['ops'] }],
        // deploy is builder 2 in the fixture; builder 4 is runtests.
        allow_rules: [{ match: 'view-builders', builders: ['deploy'], roles: ['ops'] }],
      },
    });
    ws = `${(await listenOn(api.app)).replace('http', 'ws')}/ws`;
  });
  afterAll(async () => {
    await api?.close();
  });

  it("sends a restricted builder's events to the role that may read them, and to no one else", async () => {
    const alice = await api.login('alice', 'a');
    const ops = await WsClient.open(ws, { headers: { cookie: `TWISTED_SESSION=${alice}` } });
    const anon = await WsClient.open(ws);
    try {
      for (const c of [ops, anon]) await c.subscribe('builders/*/builds/*/*');
      const open = (n: number) => ['builders', 4, 'builds', n, 'new'];
      // The bus reaches the pod: the open builder's events arrive for both.
      let n = 0;
      await waitFor(
        "the open builder's event on both sockets",
        () => {
          void publish(api.redis, open(++n), { n });
          return [ops, anon].every((c) => c.events.some((e) => e.k.startsWith('builders/4/')));
        },
        { everyMs: 5 },
      );
      await publish(api.redis, ['builders', 2, 'builds', 7, 'new'], { secret: true });
      const marker = open(1000);
      await publish(api.redis, marker, { marker: true });
      await waitFor(
        'the marker on both sockets',
        () => [ops, anon].every((c) => c.events.some((e) => e.k === marker.join('/'))),
        { everyMs: 5 },
      );
      expect(ops.events.map((e) => e.k)).toContain('builders/2/builds/7/new');
      expect(anon.events.map((e) => e.k)).not.toContain('builders/2/builds/7/new');
      expect(anon.events.length).toBeGreaterThan(1);
    } finally {
      ops.close();
      anon.close();
    }
  });
});
