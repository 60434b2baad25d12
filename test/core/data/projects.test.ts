// Buildbot 4.3's projects as a master records them: found or created by name_hash with the
// name as slug, then described; a configured builder's project set (with the builder's
// `update` event) and cleared; a build of such a builder starts with the properties
// projectid and projectname from the Builder; the configuration names projects and refuses
// a builder whose project is not one of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../services/core/config/errors.js';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import { updateBuilderList } from '../../../services/core/data/builders.js';
import { nameHash } from '../../../services/core/data/names.js';
import { findProjectId, updateProjectInfo } from '../../../services/core/data/projects.js';
import { sql } from '../../../services/core/db/pool.js';
import { initialProperties } from '../../../services/master/builds/properties.js';
import { apiGet, type Harness, insertMaster, openHarness, uniq } from './harness.js';

let h: Harness;
let m1: number;
beforeAll(async () => {
  h = await openHarness('fixture');
  m1 = await h.run((tx) => insertMaster(tx));
});
afterAll(async () => {
  await h?.close();
});

describe('projects', () => {
  it('are found by name_hash, created with the name as slug, and described', async () => {
    const name = uniq('proj');
    const id = await h.run((tx) => findProjectId(tx, name));
    expect(await h.run((tx) => findProjectId(tx, name))).toBe(id);
    expect(
      await h.db.pool.query(sql`SELECT name, name_hash, slug, description FROM projects WHERE id = ${id}`),
    ).toEqual([{ name, name_hash: nameHash(name), slug: name, description: null }]);
    const info = {
      slug: 'p',
      description: 'The *p*',
      description_format: 'markdown',
      description_html: null,
    };
    expect(await h.run((tx) => updateProjectInfo(tx, id, info))).toBe(true);
    expect(await h.run((tx) => updateProjectInfo(tx, id, info))).toBe(false);
    expect((await apiGet(h.db.pool, `projects/${id}`))[0]).toMatchObject({
      projectid: id,
      name,
      slug: 'p',
      description: 'The *p*',
      description_format: 'markdown',
      active: false,
    });
  });

  it("set a configured builder's project, announced, and clear it", async () => {
    const projectid = await h.run((tx) => findProjectId(tx, uniq('proj')));
    const name = uniq('b');
    await h.tap.clear();
    const [id] = (await h.run((tx) => updateBuilderList(tx, m1, [{ name, tags: [], projectid }]))) as [
      number,
    ];
    expect((await apiGet(h.db.pool, `builders/${id}`))[0]).toMatchObject({ projectid });
    expect((await apiGet(h.db.pool, `projects/${projectid}/builders`)).map((b) => b.builderid)).toEqual([id]);
    // On a master now, so the project is active.
    expect((await apiGet(h.db.pool, `projects/${projectid}`))[0]).toMatchObject({ active: true });
    const updates = await h.tap.events(`builders/${id}/update`);
    expect(updates.at(-1)!.m).toMatchObject({ builderid: id, projectid });
    await h.run((tx) => updateBuilderList(tx, m1, [{ name, tags: [] }]));
    expect((await apiGet(h.db.pool, `builders/${id}`))[0]).toMatchObject({ projectid: null });
  });

  it('give a build of the builder the properties projectid and projectname (source Builder)', async () => {
    const pname = uniq('proj');
    const projectid = await h.run((tx) => findProjectId(tx, pname));
    // The fixture's build 2 is one of runtests (builder 4).
    await h.db.pool.query(sql`UPDATE builders SET projectid = ${projectid} WHERE id = 4`);
    const facts = {
      buildid: 2,
      number: 1,
      bsid: 1,
      builderName: 'runtests',
      builderProperties: {},
      workerName: 'worker1',
      workerProperties: {},
      builddir: null,
      globalProperties: {},
      builderDefaultProperties: {},
    };
    const [b] = await h.db.pool.query(sql`SELECT buildrequestid FROM builds WHERE id = 2`);
    const [br] = await h.db.pool.query(
      sql`SELECT buildsetid FROM buildrequests WHERE id = ${b.buildrequestid}`,
    );
    const props = await initialProperties(h.db.pool, { ...facts, bsid: br.buildsetid });
    expect(props.projectid).toEqual([projectid, 'Builder']);
    expect(props.projectname).toEqual([pname, 'Builder']);
    await h.db.pool.query(sql`UPDATE builders SET projectid = NULL WHERE id = 4`);
    const without = await initialProperties(h.db.pool, { ...facts, bsid: br.buildsetid });
    expect(without.projectid).toBeUndefined();
    expect(without.projectname).toBeUndefined();
  });
});

describe('the configuration', () => {
  const yaml = (project: string) => `
projects:
  - name: core
    description: The *core*
    description_format: markdown
workers:
  - { name: w1, password: p }
builders:
  - { name: b1, workers: [w1], project: ${project} }
`;
  it('names projects, and a builder its own', () => {
    const cfg = parseMasterConfig(yaml('core'));
    expect(cfg.projects).toEqual([
      { name: 'core', description: 'The *core*', description_format: 'markdown' },
    ]);
    expect(cfg.builders[0]!.project).toBe('core');
  });
  it('refuses a builder whose project is not configured', () => {
    expect(() => parseMasterConfig(yaml('nope'))).toThrow(ConfigError);
    expect(() => parseMasterConfig(yaml('nope'))).toThrow(/builders\[0\]\.project: no project named "nope"/);
  });
});
