// A change's properties reach its build, but never those the scheduler sets (issue 28): in
// the review an unauthenticated POST /change_hook/base with properties {scheduler: "evil",
// owner: "evil"} renamed the build's scheduler and made "evil" its owner (whom the `owner`
// role matcher trusts), as Buildbot 3.7 lets a change do. Here the change goes in through the
// real base hook and the real scheduler builds it; the build starts with the scheduler's own
// values, the change's other properties, and a warning naming what was dropped.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { initialProperties } from '../../../services/master/builds/properties.js';
import { hookApp } from '../../api/hooks/lib.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { eventually } from '../../helpers/wait.js';
import { type Cluster, configWith, openCluster, uniq } from './lib.js';

let c: Cluster;
let hooks: FastifyInstance;
const { log, lines } = capturedLog();

beforeAll(async () => {
  c = await openCluster();
  hooks = await hookApp(c.h, { base: { enabled: true } });
});
afterAll(async () => {
  await hooks?.close();
  await c?.close();
});

describe("a change's properties", () => {
  it('cannot override scheduler, owner or a property the scheduler sets; the others reach the build', async () => {
    const name = uniq('props');
    const branch = uniq('main');
    await c.manager(
      configWith(`
  - type: single-branch
    name: ${name}
    branch: ${branch}
    builders: [b1]
    properties: { color: blue }`),
      { log },
    );
    const res = await hooks.inject({
      method: 'POST',
      url: '/change_hook/base',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        author: 'Dev <dev@example.org>',
        branch,
        revision: 'abc',
        properties: JSON.stringify({ scheduler: 'evil', owner: 'evil', color: 'red', ticket: 42 }),
      }).toString(),
    });
    expect(res.body).toBe('1 change found');

    // Found by its reason, which names the scheduler whatever its properties say.
    const [bs] = await eventually(
      () => c.h.db.pool.query(sql`SELECT id AS bsid FROM buildsets WHERE reason LIKE ${`%'${name}'%`}`),
      (s) => s.length === 1,
    );
    const stored = await c.h.db.pool.query(
      sql`SELECT property_name, property_value FROM buildset_properties WHERE buildsetid = ${bs!.bsid}`,
    );
    expect(Object.fromEntries(stored.map((p) => [p.property_name, JSON.parse(p.property_value)]))).toEqual({
      scheduler: [name, 'Scheduler'],
      color: ['blue', 'Scheduler'],
      ticket: [42, 'Change'],
    });
    // What the build starts with: its owners are the change's author, never "evil".
    const props = await initialProperties(c.h.db.pool, {
      buildid: 1,
      number: 1,
      bsid: bs!.bsid,
      builderName: 'b1',
      globalProperties: {},
      builderProperties: {},
      builderDefaultProperties: {},
      workerName: 'w1',
      workerProperties: {},
      builddir: null,
    });
    expect(props.scheduler).toEqual([name, 'Scheduler']);
    expect(props.owner).toBeUndefined();
    expect(props.owners).toEqual([['Dev <dev@example.org>'], 'Build']);
    expect(props.ticket).toEqual([42, 'Change']);

    const warning = lines.find((l) => l.scheduler === name);
    expect(warning).toMatchObject({
      level: 40,
      properties: ['color', 'owner', 'scheduler'],
      msg: "a change's properties were dropped: the scheduler sets them, a change cannot",
    });
  });
});
