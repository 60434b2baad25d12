// Every endpoint of the registry, read on the oracle's fixture: one GET with ids that exist
// answers 200 with the envelope of its resource (and the very entity the ids name), and for
// each path parameter, the same path with that parameter naming nothing answers 404
// `not found`. The list comes from the registry itself, so a new endpoint is tested (or
// fails here, asking how to bind its parameters) the day it is added.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint } from '../../services/api/registry/model.js';
import { sql } from '../../services/core/db/pool.js';
import { type Answer, ApiUnderTest, oracleForceSchedulers, oracleRegistry } from './lib/harness.js';
import { type Context, fixtureContext, NOT_READABLE, paramsOf, pathOf } from './lib/registry-paths.js';

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
let api: ApiUnderTest;
let ctx: Context;
let forceName: string;

beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  ctx = await fixtureContext(api.db.pool);
  forceName = ctx.schedulername;
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
  // A build's triggered builds are other builds than the context's.
  const want: [string, unknown] | null = e.pattern.endsWith('/triggered_builds')
    ? ['buildid', ctx.triggered_buildid]
    : expectedKey(plural, ctx, forceName);
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
    // raw_inline (Buildbot 4.3) is shown, raw saved.
    const disposition = e.inline ? 'inline' : 'attachment';
    expect(a.headers['content-disposition']).toBe(`${disposition}; filename=${ctx.log_slug}`);
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
  // read back through them in test/master/builds/transfer.test.ts.
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
