// Every endpoint of the registry, read on the oracle's fixture: one GET with ids that exist
// answers 200 with the envelope of its resource (and the very entity the ids name), and for
// each path parameter, the same path with that parameter naming nothing answers 404
// `not found`. The list comes from the registry itself, so a new endpoint is tested (or
// fails here, asking how to bind its parameters) the day it is added.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint } from '../../services/api/registry/model.js';
import { sql } from '../../services/core/db/pool.js';
import { type Answer, ApiUnderTest, oracleForceSchedulers, oracleRegistry } from './lib/harness.js';

/** Ids of one build of the fixture and everything around it, all of which exist. */
interface Context {
  buildid: number;
  number: number;
  builderid: number;
  buildername: string;
  buildrequestid: number;
  bsid: number;
  workerid: number;
  workername: string;
  masterid: number;
  stepid: number;
  step_name: string;
  step_number: number;
  logid: number;
  log_slug: string;
  log_type: string;
  data_name: string;
  test_result_setid: number;
  changeid: number;
  ssid: number;
  changesourceid: number;
  schedulerid: number;
  schedulername: string;
}

// A build whose step has logs and a test result set, with build data and properties, whose
// newest change has properties, on a worker configured for its builder on its master.
const IDENT = '^[a-zA-Z_-][.a-zA-Z0-9_-]*$';
const CONTEXT_SQL = sql`
  SELECT b.id AS buildid, b.number, b.builderid, bl.name AS buildername, b.buildrequestid,
         br.buildsetid AS bsid, b.workerid, w.name AS workername, b.masterid,
         st.id AS stepid, st.name AS step_name, st.number AS step_number,
         l.id AS logid, l.slug AS log_slug, l.type AS log_type, d.name AS data_name,
         trs.id AS test_result_setid, ch.changeid, ch.sourcestampid AS ssid,
         (SELECT csm.changesourceid FROM changesource_masters csm WHERE csm.masterid = b.masterid
           ORDER BY 1 LIMIT 1) AS changesourceid,
         (SELECT sm.schedulerid FROM scheduler_masters sm WHERE sm.masterid = b.masterid
           ORDER BY 1 LIMIT 1) AS schedulerid
  FROM builds b
  JOIN builders bl ON bl.id = b.builderid
  JOIN workers w ON w.id = b.workerid
  JOIN buildrequests br ON br.id = b.buildrequestid
  JOIN test_result_sets trs ON trs.buildid = b.id
  JOIN steps st ON st.id = trs.stepid
  JOIN LATERAL (SELECT * FROM logs l WHERE l.stepid = st.id AND l.slug ~ ${IDENT}
                ORDER BY l.id LIMIT 1) l ON true
  JOIN LATERAL (SELECT * FROM build_data d WHERE d.buildid = b.id ORDER BY d.name LIMIT 1) d ON true
  JOIN LATERAL (SELECT c.* FROM changes c
                JOIN buildset_sourcestamps bss ON bss.sourcestampid = c.sourcestampid
                WHERE bss.buildsetid = br.buildsetid ORDER BY c.changeid DESC LIMIT 1) ch ON true
  WHERE st.name ~ ${IDENT} AND bl.name ~ ${IDENT} AND w.name ~ ${IDENT} AND d.name ~ ${IDENT}
    AND EXISTS (SELECT 1 FROM change_properties cp WHERE cp.changeid = ch.changeid)
    AND EXISTS (SELECT 1 FROM buildset_properties bp WHERE bp.buildsetid = br.buildsetid)
    AND EXISTS (SELECT 1 FROM build_properties p WHERE p.buildid = b.id)
    AND EXISTS (SELECT 1 FROM test_results tr WHERE tr.test_result_setid = trs.id)
    AND EXISTS (SELECT 1 FROM configured_workers cw JOIN builder_masters bm ON bm.id = cw.buildermasterid
                WHERE cw.workerid = w.id AND bm.builderid = b.builderid AND bm.masterid = b.masterid)
  ORDER BY b.id LIMIT 1`;

/** The value a path parameter takes in the context. */
function bind(pattern: string, param: string, c: Context): string | number {
  switch (param) {
    case 'name':
      if (pattern.includes('workers/i:name')) return c.workername;
      if (pattern.includes('data/i:name')) return c.data_name;
      break;
    case 'build_number':
      return c.number;
    default:
      if (param in c) return c[param as keyof Context];
  }
  throw new Error(`endpoints.test.ts cannot bind :${param} of '${pattern}'; teach bind() about it`);
}

interface Param {
  name: string;
  kind: 'n' | 'i' | 'any';
  index: number;
}

function paramsOf(pattern: string): Param[] {
  if (pattern === '') return [];
  return pattern.split('/').flatMap((seg, index) => {
    const m = /^(n|i)?:([a-z0-9_.]+)$/.exec(seg);
    return m
      ? [{ name: m[2]!, kind: ((m[1] as 'n' | 'i' | undefined) ?? 'any') as Param['kind'], index }]
      : [];
  });
}

function pathOf(pattern: string, c: Context, missing?: Param): string {
  if (pattern === '') return '';
  const segs = pattern.split('/');
  for (const p of paramsOf(pattern)) {
    const value =
      p.index === missing?.index ? (p.kind === 'n' ? 999999 : `no-such-${p.name}`) : bind(pattern, p.name, c);
    segs[p.index] = encodeURIComponent(String(value));
  }
  return `/${segs.join('/')}`;
}

/** The key value a single read must answer, and a collection must contain, per resource. */
function expectedKey(plural: string, c: Context, forceName: string): [string, unknown] | null {
  const keys: Record<string, [string, unknown]> = {
    builds: ['buildid', c.buildid],
    builders: ['builderid', c.builderid],
    buildrequests: ['buildrequestid', c.buildrequestid],
    workers: ['workerid', c.workerid],
    steps: ['stepid', c.stepid],
    logs: ['logid', c.logid],
    logchunks: ['logid', c.logid],
    buildsets: ['bsid', c.bsid],
    changes: ['changeid', c.changeid],
    changesources: ['changesourceid', c.changesourceid],
    masters: ['masterid', c.masterid],
    sourcestamps: ['ssid', c.ssid],
    schedulers: ['schedulerid', c.schedulerid],
    forceschedulers: ['name', forceName],
    build_data: ['name', c.data_name],
    test_result_sets: ['test_result_setid', c.test_result_setid],
  };
  return keys[plural] ?? null;
}

const registry = oracleRegistry();
// Readable by GET only through their sub-paths: /steps/N itself, and the `logchunks` root
// link (Buildbot fails on it; it names no log). Both are 404 whatever the ids.
const NOT_READABLE = (e: Endpoint) =>
  e.noGet === true || (e.kind === 'logchunk' && paramsOf(e.pattern).length === 0);

let api: ApiUnderTest;
let ctx: Context;
let forceName: string;

beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  const rows = await api.db.pool.query(CONTEXT_SQL);
  expect(rows, 'the fixture has a build with everything this test reads').toHaveLength(1);
  ctx = rows[0] as Context;
  const force = oracleForceSchedulers().find((f) => f.builderNames.includes(ctx.buildername));
  expect(force, `a force scheduler for builder ${ctx.buildername}`).toBeDefined();
  forceName = force!.name;
  ctx.schedulername = forceName;
});
afterAll(async () => {
  await api?.close();
});

function expectNotFound(a: Answer, path: string): void {
  expect({ path, status: a.status, mediaType: a.mediaType, body: a.text }).toEqual({
    path,
    status: 404,
    mediaType: 'text/plain',
    body: 'not found',
  });
}

async function checkRows(e: Endpoint, path: string): Promise<void> {
  const a = await api.get(path);
  expect(a.status, `${path}: ${a.text.slice(0, 200)}`).toBe(200);
  expect(a.mediaType).toBe('application/json');
  const body = a.json();
  const plural = e.resource.plural;
  expect(Object.keys(body).sort()).toEqual([plural, 'meta'].sort());
  const rows = body[plural] as Record<string, unknown>[];
  expect(rows.length, `${path} answers at least one ${e.resource.name}`).toBeGreaterThan(0);
  if (e.collection) {
    expect(body.meta).toEqual({ total: rows.length });
  } else {
    expect(body.meta).toEqual({});
    expect(rows).toHaveLength(1);
  }
  const want = expectedKey(plural, ctx, forceName);
  if (want && e.kind !== 'properties') {
    const [key, value] = want;
    const values = rows.map((r) => r[key]);
    if (e.collection) expect(values, `${path} lists ${key} ${value}`).toContain(value);
    else expect(values, `${path} is ${key} ${value}`).toEqual([value]);
  }
  if (e.kind === 'properties') {
    expect(typeof rows[0]).toBe('object');
    expect(Object.keys(rows[0]!).length, `${path} has properties`).toBeGreaterThan(0);
  }
  if (e.kind === 'logchunk') {
    const [n] = await api.db.pool.query(sql`SELECT num_lines FROM logs WHERE id = ${ctx.logid}`);
    const chunk = rows[0] as { firstline: number; content: string };
    expect(chunk.firstline).toBe(0);
    expect(chunk.content.split('\n')).toHaveLength(n.num_lines + 1);
  }
}

async function checkRaw(e: Endpoint, path: string): Promise<void> {
  const a = await api.get(path, {});
  expect(a.status, `${path}: ${a.text.slice(0, 200)}`).toBe(200);
  if (e.kind === 'raw-log') {
    expect(a.mediaType).toBe(ctx.log_type === 'h' ? 'text/html' : 'text/plain');
    expect(a.headers['content-disposition']).toBe(`attachment; filename=${ctx.log_slug}`);
    expect(a.text.length).toBeGreaterThan(0);
  } else {
    const [d] = await api.db.pool.query(
      sql`SELECT value FROM build_data WHERE buildid = ${ctx.buildid} AND name = ${ctx.data_name}`,
    );
    expect(a.mediaType).toBe('application/octet-stream');
    expect(a.headers['content-disposition']).toBe(`attachment; filename=${ctx.data_name}`);
    expect(a.raw.equals(d.value)).toBe(true);
  }
}

describe('every endpoint answers its resource for ids that exist', () => {
  it('covers the whole registry', () => {
    // Also a guard that this file still sees every endpoint: the registry only grows.
    expect(registry.endpoints.length).toBeGreaterThanOrEqual(114);
    const readable = registry.endpoints.filter((e) => !NOT_READABLE(e));
    expect(registry.endpoints.length - readable.length).toBe(2);
  });

  // Flotilla's own (unlisted) artifacts: the Buildbot fixture has none; real uploads are
  // read back through them in test/master/build/transfer.test.ts.
  for (const e of registry.endpoints.filter((x) => !x.unlisted)) {
    it(`GET /${e.pattern}`, async () => {
      const path = pathOf(e.pattern, ctx);
      if (NOT_READABLE(e)) return expectNotFound(await api.get(path), path);
      if (e.kind === 'raw-log' || e.kind === 'build-data-value') return checkRaw(e, path);
      return checkRows(e, path);
    });
  }
});

describe('a path whose id, name or parent does not exist is 404 not found', () => {
  for (const e of registry.endpoints) {
    for (const p of paramsOf(e.pattern)) {
      it(`GET /${e.pattern} with a missing :${p.name}`, async () => {
        const path = pathOf(e.pattern, ctx, p);
        expectNotFound(await api.get(path), path);
      });
    }
  }
});

describe('the path forms of one family name the same entity', () => {
  it('builders by id and by name, steps by number and by name, builds by id and by number', async () => {
    const c = () => ctx;
    const same = async (paths: string[], plural: string, count = 1) => {
      const bodies = await Promise.all(paths.map((p) => api.get(p).then((a) => a.json()[plural])));
      for (const b of bodies) expect(b).toEqual(bodies[0]);
      expect(bodies[0]).toHaveLength(count);
    };
    const { builderid, buildername, number, buildid, step_name, step_number, log_slug } = c();
    await same([`/builders/${builderid}`, `/builders/${buildername}`], 'builders');
    await same(
      [
        `/builds/${buildid}`,
        `/builders/${builderid}/builds/${number}`,
        `/builders/${buildername}/builds/${number}`,
      ],
      'builds',
    );
    await same(
      [
        `/builds/${buildid}/steps/${step_name}`,
        `/builds/${buildid}/steps/${step_number}`,
        `/builders/${builderid}/builds/${number}/steps/${step_name}`,
        `/builders/${builderid}/builds/${number}/steps/${step_number}`,
        `/builders/${buildername}/builds/${number}/steps/${step_name}`,
        `/builders/${buildername}/builds/${number}/steps/${step_number}`,
      ],
      'steps',
    );
    await same(
      [
        `/logs/${c().logid}`,
        `/steps/${c().stepid}/logs/${log_slug}`,
        `/builds/${buildid}/steps/${step_name}/logs/${log_slug}`,
        `/builds/${buildid}/steps/${step_number}/logs/${log_slug}`,
        `/builders/${buildername}/builds/${number}/steps/${step_name}/logs/${log_slug}`,
      ],
      'logs',
    );
    await same(
      [`/builders/${builderid}/forceschedulers`, `/builders/${buildername}/forceschedulers`],
      'forceschedulers',
      oracleForceSchedulers().filter((f) => f.builderNames.includes(buildername)).length,
    );
  });
});
