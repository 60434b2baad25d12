// A hidden builder's data is decided by that builder's view rules on every path that reads it.
// Issue 28, item 1: /artifacts/{id} and /artifacts/{id}/raw named no builder, so no view rule
// matched them and anyone could read every hidden artifact by counting ids. The second part
// walks every pattern of the registry, so that the next resource cannot fall through the
// same way: each pattern either reads no builder's data (declared so, below) or, with the ids
// of a hidden builder's build, is refused to a guest and read by those the builder's rules let
// read it. One API on one copy of the fixture; every check is a request through inject.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authorizer } from '../../../services/api/auth/authorizer.js';
import { Targets } from '../../../services/api/auth/targets.js';
import { authzPolicy } from '../../../services/api/http/logins.js';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import {
  appendArtifact,
  completeArtifact,
  newArtifact,
  transact,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { oracleRegistry } from '../lib/harness.js';
import { type Context, fixtureContext, NOT_READABLE, pathOf } from '../lib/registry-paths.js';
import { AuthApp, type Reply, testHash } from './lib.js';

// As the review had them (test/api/lib/review.yaml): the test builders for developers and
// admins, deploy for admins only; `build` has no rule, so everybody reads it.
const HIDDEN = 'runtests';
const VISIBLE = 'build';
const RULES = [
  { match: 'view-builders', builders: [HIDDEN, 'flaky'], roles: ['developer', 'admin'] },
  { match: 'view-builders', builders: ['deploy'], roles: ['admin'] },
  { match: 'any-control', roles: ['admin'] },
];
const ROLES = [
  { role: 'admin', groups: ['admins'] },
  { role: 'developer', groups: ['developers'] },
];
const REFUSED_HIDDEN = "you need to have one of the roles 'developer', 'admin'";

type Who = 'anonymous' | 'guest' | 'developer' | 'admin';

let db: TestDatabase;
let api: AuthApp;
let ctx: Context;
const sessions: Partial<Record<Who, string>> = {};
/** Artifacts: the hidden build's, one of the visible builder's, one half written (hidden). */
const ids = { hidden: 0, visible: 0, unfinished: 0 };
const HIDDEN_BYTES = 'hidden bytes';
const VISIBLE_BYTES = 'visible bytes';

beforeAll(async () => {
  db = await createDatabase('fixture');
  ctx = await fixtureContext(db.pool);
  const users = [
    { username: 'admin', password_hash: await testHash('a'), groups: ['admins'] },
    { username: 'dev', password_hash: await testHash('d'), groups: ['developers'] },
    { username: 'guest', password_hash: await testHash('g') },
  ];
  api = await AuthApp.start({ auth: { users, role_matchers: ROLES, allow_rules: RULES } }, { db });
  sessions.admin = await api.login('admin', 'a');
  sessions.developer = await api.login('dev', 'd');
  sessions.guest = await api.login('guest', 'g');
  const [visible] = await db.pool.query(sql`
    SELECT s.buildid, s.id AS stepid FROM steps s JOIN builds b ON b.id = s.buildid
    JOIN builders bl ON bl.id = b.builderid WHERE bl.name = ${VISIBLE} ORDER BY s.id LIMIT 1`);
  await transact({ db: db.pool, redis: api.redis }, async (tx) => {
    const add = async (buildid: number, stepid: number, name: string, bytes: string | null) => {
      const id = await newArtifact(tx, { buildid, stepid, name, kind: 'file' });
      await appendArtifact(tx, id, Buffer.from(bytes ?? 'half'));
      if (bytes !== null) await completeArtifact(tx, id);
      return id;
    };
    ids.hidden = await add(ctx.buildid, ctx.stepid, 'out/hidden.txt', HIDDEN_BYTES);
    ids.unfinished = await add(ctx.buildid, ctx.stepid, 'out/half.bin', null);
    ids.visible = await add(visible.buildid, visible.stepid, 'out/visible.txt', VISIBLE_BYTES);
  });
  ctx.artifactid = ids.hidden;
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const get = (path: string, who: Who, method = 'GET'): Promise<Reply> =>
  api.request(method, `/api/v2${path}`, who === 'anonymous' ? {} : { session: sessions[who]! });

/** Buildbot's REST refusal, and not for a shared cache to keep. */
function expectRefused(a: Reply, message: string, what: string): void {
  expect({ what, status: a.status, type: a.headers['content-type'], body: a.text }).toEqual({
    what,
    status: 403,
    type: 'text/plain; charset=utf-8',
    body: `{"error": "${message}"}`,
  });
  expectPrivate(a, what);
}

function expectPrivate(a: Reply, what: string): void {
  expect(a.headers['cache-control'], what).toBe('private');
  const vary = String(a.headers.vary).split(/,\s*/);
  expect(vary, what).toEqual(expect.arrayContaining(['Cookie', 'Authorization']));
}

describe('artifacts of a hidden builder (issue 28, item 1)', () => {
  it('by id and raw: refused to anonymous users and guests, HEAD included; read by an admin', async () => {
    expect(ctx.buildername, 'the fixture context is the hidden builder').toBe(HIDDEN);
    for (const path of [`/artifacts/${ids.hidden}`, `/artifacts/${ids.hidden}/raw`]) {
      for (const who of ['anonymous', 'guest'] as const) {
        expectRefused(await get(path, who), REFUSED_HIDDEN, `${who} GET ${path}`);
        const head = await get(path, who, 'HEAD');
        expect([head.status, head.text], `${who} HEAD ${path}`).toEqual([403, '']);
      }
    }
    const one = await get(`/artifacts/${ids.hidden}`, 'admin');
    expect(one.status).toBe(200);
    expect(one.json().artifacts).toMatchObject([
      { artifactid: ids.hidden, buildid: ctx.buildid, stepid: ctx.stepid, name: 'out/hidden.txt' },
    ]);
    expectPrivate(one, 'admin GET /artifacts/{id}');
    for (const who of ['admin', 'developer'] as const) {
      const raw = await get(`/artifacts/${ids.hidden}/raw`, who);
      expect([raw.status, raw.text], who).toEqual([200, HIDDEN_BYTES]);
      expectPrivate(raw, `${who} GET /artifacts/{id}/raw`);
    }
  });

  it("the lists of a hidden build's and step's artifacts are refused alike", async () => {
    const lists = [
      `/builds/${ctx.buildid}/artifacts`,
      `/steps/${ctx.stepid}/artifacts`,
      `/builders/${ctx.builderid}/builds/${ctx.number}/artifacts`,
      `/builders/${HIDDEN}/builds/${ctx.number}/artifacts`,
    ];
    for (const path of lists) {
      expectRefused(await get(path, 'guest'), REFUSED_HIDDEN, `guest GET ${path}`);
      const admin = await get(path, 'admin');
      expect(
        admin.json().artifacts.map((a: { artifactid: number }) => a.artifactid),
        path,
      ).toEqual([ids.hidden]);
    }
  });

  it("a visible builder's artifact stays readable by everybody", async () => {
    for (const who of ['anonymous', 'guest', 'developer', 'admin'] as const) {
      const one = await get(`/artifacts/${ids.visible}`, who);
      expect([one.status, one.json().artifacts[0].name], who).toEqual([200, 'out/visible.txt']);
      const raw = await get(`/artifacts/${ids.visible}/raw`, who);
      expect([raw.status, raw.text], who).toEqual([200, VISIBLE_BYTES]);
      // Who may read it depends on who asks: no shared cache may keep it for another.
      expectPrivate(raw, `${who} GET /artifacts/{id}/raw`);
    }
  });

  it('tells a guest no more than the builds path does', async () => {
    // A hidden artifact, finished or not, is answered as a hidden build is; one that does not
    // exist as a build that does not exist (refusal first, then 404, as for every path).
    const same = async (artifact: string, build: string) => {
      const [a, b] = await Promise.all([get(artifact, 'guest'), get(build, 'guest')]);
      expect({ status: a.status, body: a.text }, artifact).toEqual({ status: b.status, body: b.text });
      return a.status;
    };
    expect(await same(`/artifacts/${ids.hidden}`, `/builds/${ctx.buildid}`)).toBe(403);
    expect(await same(`/artifacts/${ids.unfinished}/raw`, `/builds/${ctx.buildid}`)).toBe(403);
    expect(await same('/artifacts/999999/raw', '/builds/999999')).toBe(404);
    // Those who may see the builder see only finished uploads.
    expect((await get(`/artifacts/${ids.unfinished}/raw`, 'admin')).status).toBe(404);
  });

  it('events about artifacts, should any be published, follow the same rule', async () => {
    const parsed = masterConfigSchema.shape.auth.parse({ allow_rules: RULES, role_matchers: ROLES });
    const authz = new Authorizer(authzPolicy(parsed), new Targets(db.pool), new Map());
    const anon = { anonymous: true };
    const dev = { username: 'dev', groups: ['developers'] };
    expect(await authz.authorize(anon, ['artifacts', String(ids.hidden), 'new'])).toBe(false);
    expect(await authz.authorize(anon, ['artifacts', String(ids.visible), 'new'])).toBe(true);
    expect(await authz.authorize(dev, ['artifacts', String(ids.hidden), 'new'])).toBe(true);
  });
});

// Paths that read no builder's data: a guest's answer is an admin's, byte for byte. A new
// pattern goes here only when that is true of it; anything else must be refused below.
const NO_BUILDER_DATA = new Set([
  '',
  'application.spec',
  'changes',
  'changes/n:changeid',
  'changes/n:changeid/properties_list',
  'sourcestamps/n:ssid/changes',
  'changesources',
  'changesources/n:changesourceid',
  'masters/n:masterid/changesources',
  'masters/n:masterid/changesources/n:changesourceid',
  'masters',
  'masters/n:masterid',
  'schedulers',
  'schedulers/n:schedulerid',
  'masters/n:masterid/schedulers',
  'masters/n:masterid/schedulers/n:schedulerid',
  'sourcestamps',
  'sourcestamps/n:ssid',
  // Buildbot 4.3's projects: a name and a description; their builders are a list below.
  'projects',
  'projects/n:projectid',
  'projects/i:projectname',
  // Buildbot 4.3's codebases, their commits and branches: a project's, no builder's.
  'codebases/n:codebaseid',
  'projects/n:projectid/codebases/i:codebasename',
  'codebases',
  'commits/n:commitid',
  'codebases/n:codebaseid/commits_by_revision/s:revision',
  'codebases/n:codebaseid/commits',
  'codebases/n:codebaseid/commit_range/n:commitid1/n:commitid2/commits_common_parent',
  'branches/n:branchid',
  'codebases/n:codebaseid/branches',
]);

// Paths that read several builders' data without naming one: read only by those who may read
// every builder (a developer may not: deploy is hidden from them), whatever the ids.
const SPANS_BUILDERS = new Set([
  'builders',
  'masters/n:masterid/builders',
  'builds',
  'changes/n:changeid/builds',
  // Flotilla's builds of many changes, as the builds of one.
  'change_builds',
  'workers/n:workerid/builds',
  'buildrequests',
  'buildsets',
  'buildsets/n:bsid',
  'buildsets/n:bsid/properties',
  'buildsets/n:bsid/properties_list',
  'logchunks',
  // Buildbot 4.3's. A build's triggered builds are other builders' builds: the path names
  // the triggering build, whose builder's rules do not decide who reads the others.
  'builds/n:buildid/triggered_builds',
  'projects/n:projectid/builders',
  'workers/n:workerid/builders',
  'buildsets/:buildsetid/sourcestamps',
  'test_result_sets',
  // A force scheduler's builder_names (whichever path reads it, a builder's included) and a
  // worker's configured_on (but under a builder, where it lists that builder's only) name
  // builders, a hidden one's too: once declared to read no builder's data, they showed a
  // hidden builder's name and id to a guest.
  'forceschedulers',
  'forceschedulers/i:schedulername',
  'builders/:builderid/forceschedulers',
  'workers',
  'workers/n:workerid',
  'workers/i:name',
  'masters/n:masterid/workers',
  'masters/n:masterid/workers/n:workerid',
  'masters/n:masterid/workers/i:name',
]);

// Paths only administrators read (Flotilla's audit log): refused to everybody else.
const ADMINS_ONLY = new Set(['audit']);

describe('every path of the registry is decided by the rules of the builder whose data it reads', () => {
  const registry = oracleRegistry();

  it('the declared lists name patterns of the registry, each once', () => {
    const patterns = new Set(registry.endpoints.map((e) => e.pattern));
    for (const p of [...NO_BUILDER_DATA, ...SPANS_BUILDERS, ...ADMINS_ONLY])
      expect(patterns.has(p), p).toBe(true);
    expect([...NO_BUILDER_DATA].filter((p) => SPANS_BUILDERS.has(p))).toEqual([]);
  });

  it('the force schedulers and the workers do name the hidden builder: their refusal hides it', async () => {
    const forced = (await get('/forceschedulers', 'admin')).json().forceschedulers;
    expect(forced.flatMap((f: { builder_names: string[] }) => f.builder_names)).toContain(HIDDEN);
    const workers = (await get('/workers', 'admin')).json().workers;
    const on = workers.flatMap((w: { configured_on: { builderid: number }[] }) => w.configured_on);
    expect(on.map((c: { builderid: number }) => c.builderid)).toContain(ctx.builderid);
    for (const path of ['/forceschedulers', '/workers', `/workers/${ctx.workerid}`])
      for (const who of ['anonymous', 'guest'] as const) {
        const a = await get(path, who);
        expect([a.status, a.text.includes(HIDDEN)], `${who} GET ${path}`).toEqual([403, false]);
      }
  });

  for (const e of registry.endpoints) {
    it(`GET /${e.pattern}`, async () => {
      const path = pathOf(e.pattern, ctx);
      const [anonymous, guest, developer, admin] = (await Promise.all(
        (['anonymous', 'guest', 'developer', 'admin'] as const).map((who) => get(path, who)),
      )) as [Reply, Reply, Reply, Reply];
      const answer = (a: Reply) => ({ status: a.status, body: a.text });
      if (NO_BUILDER_DATA.has(e.pattern)) {
        expect(answer(guest), `${path}: declared to read no builder's data`).toEqual(answer(admin));
        return;
      }
      const fell = (who: string) =>
        `${who} read ${path} (/${e.pattern}) of the hidden builder ${HIDDEN}: a path that reads ` +
        "a builder's data must be decided by that builder's rules (services/api/auth/targets.ts), " +
        'or be listed in NO_BUILDER_DATA if it reads none';
      expect(anonymous.status, fell('an anonymous user')).toBe(403);
      expect(guest.status, fell('a guest')).toBe(403);
      // Those the builder's rules let read it do: the ids name real rows of that builder.
      expect(admin.status, `${path} for an admin: ${admin.text.slice(0, 200)}`).toBe(
        NOT_READABLE(e) ? 404 : 200,
      );
      if (SPANS_BUILDERS.has(e.pattern) || ADMINS_ONLY.has(e.pattern))
        expect(developer.status, `${path} for a developer`).toBe(403);
      else expect(answer(developer), `${path} for a developer`).toEqual(answer(admin));
    });
  }
});
