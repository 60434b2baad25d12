// Buildbot 4.3's c['codebases'] and a GitPoller given a codebase (issue 32 §2), as 4.3 writes
// them (botmaster.reconfig_codebases, changes/gitpoller.py, data/codebase_*.py): a master
// records each configured codebase at start (`codebases/<id>/update`); a poller records each
// new commit after its change, oldest first, chained by parent_commitid (the first to its git
// parent when that is recorded), then moves the branch to the newest (`commits/<id>/new`,
// also under `codebases/<cbid>/commits/<id>/new`, and `branches/<id>/update`), every event
// seen over /sse as any other; the read API answers them. A real repository, a real
// database and Redis, and the API's real event stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addCommit,
  findCodebaseId,
  projectIdOf,
  transact,
  updateCodebaseInfo,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { type EventsApp, request, SseClient, startEventsApp } from '../../api/events/lib.js';
import { problems } from '../../config/problems.js';
import { apiGet } from '../../core/data/harness.js';
import { waitFor } from '../../helpers/wait.js';
import { Stage } from '../in-process.js';
import { scratchRepo } from './scratch-repo.js';

const scratch = scratchRepo('flotilla-poller-codebase-');
const { repo, commit } = scratch;

const CONFIG = `
projects: [{ name: example }]
codebases: [{ name: main, project: example, slug: main-code }]
`;

let stage: Stage;
let api: EventsApp;
let sse: SseClient;
beforeAll(async () => {
  stage = await Stage.open();
  api = await startEventsApp(stage.redis.url);
  sse = await SseClient.open(`${api.origin}/sse/listen/codebases/*/update`);
  await waitFor('handshake', () => sse.events.length === 1, { everyMs: 5, gaveUp: sse.gone });
  for (const path of ['codebases/*/commits/*/new', 'commits/*/new', 'branches/*/update'])
    expect((await request(`${api.origin}/sse/add/${sse.uuid}/${path}`)).status).toBe(200);
  commit('one');
}, 120_000);
afterAll(async () => {
  sse?.close();
  await api?.close();
  await stage?.close();
  scratch.remove();
});

const keys = () => sse.data.map((d) => (d as { key: string[] }).key.join('/'));

const poller = () =>
  scratch.poller(
    `${CONFIG}\nchange_sources: [{ name: p, type: git, repourl: ${repo}, branches: [main], codebase: { name: main, project: example } }]`,
    stage.ctx,
  );

describe("Buildbot 4.3's codebases", () => {
  let codebaseid: number;

  it('are recorded by a master at start, announced', async () => {
    const m = await stage.master('codebases', CONFIG);
    const [cb] = await apiGet(stage.db.pool, 'codebases');
    expect(cb).toMatchObject({ name: 'main', slug: 'main-code' });
    codebaseid = cb!.codebaseid as number;
    await waitFor('the codebase announced', () => keys().includes(`codebases/${codebaseid}/update`), {
      everyMs: 5,
      gaveUp: sse.gone,
    });
    expect(sse.data[0]).toEqual({ key: ['codebases', String(codebaseid), 'update'], message: cb });
    await m.stop();
    // A second start finds it again and changes nothing.
    await (await stage.master('codebases-again', CONFIG)).stop();
    expect(await apiGet(stage.db.pool, 'codebases')).toEqual([cb]);
  });

  it("get a poller's new commits, chained, and its branch moved to the newest", async () => {
    const p = poller();
    await p.pollNow(); // the first poll only records the head, as Buildbot
    const two = commit('two');
    const three = commit('three');
    await p.pollNow();
    const commits = await apiGet(stage.db.pool, `codebases/${codebaseid}/commits`);
    expect(commits.map((c) => [c.revision, c.comments, c.author, c.committer])).toEqual([
      [two, 'two', 'A <a@x>', 'C <c@x>'],
      [three, 'three', 'A <a@x>', 'C <c@x>'],
    ]);
    const [c2, c3] = commits.map((c) => c.commitid as number);
    // `one` was never recorded: the first has no parent; the next names the one before it.
    expect(commits.map((c) => c.parent_commitid)).toEqual([null, c2]);
    const [branch] = await apiGet(stage.db.pool, `codebases/${codebaseid}/branches`);
    expect(branch).toMatchObject({ codebaseid, name: 'main', commitid: c3 });
    // The changes are made as before, with no codebase of their own.
    const changes = await stage.db.pool.query(sql`SELECT revision, codebase FROM changes ORDER BY changeid`);
    expect(changes).toEqual([
      { revision: two, codebase: '' },
      { revision: three, codebase: '' },
    ]);

    const four = commit('four');
    await p.pollNow();
    const [c4] = (await apiGet(stage.db.pool, `codebases/${codebaseid}/commits_by_revision/${four}`)) as {
      commitid: number;
      parent_commitid: number;
    }[];
    // The first of a poll names its git parent, found by revision.
    expect(c4!.parent_commitid).toBe(c3);
    expect((await apiGet(stage.db.pool, `branches/${branch!.branchid}`))[0]).toMatchObject({
      commitid: c4!.commitid,
    });

    const want = [c2!, c3!, c4!.commitid].flatMap((id) => [
      `commits/${id}/new`,
      `codebases/${codebaseid}/commits/${id}/new`,
    ]);
    await waitFor('the commits and branch updates over /sse', () => keys().length === 1 + 6 + 2, {
      everyMs: 5,
      gaveUp: sse.gone,
    });
    expect(keys().filter((k) => k.includes('commits/'))).toEqual(want);
    expect(keys().filter((k) => k.startsWith('branches/'))).toEqual([
      `branches/${branch!.branchid}/update`,
      `branches/${branch!.branchid}/update`,
    ]);
    const newest = sse.data.find(
      (d) => (d as { key: string[] }).key.join('/') === `commits/${c4!.commitid}/new`,
    );
    expect((newest as { message: unknown }).message).toEqual(
      (await apiGet(stage.db.pool, `commits/${c4!.commitid}`))[0],
    );
    await p.stop();
  });

  it('keep one row per revision: a revision recorded again is not added or announced', async () => {
    const before = keys().length;
    const [known] = await apiGet(stage.db.pool, `codebases/${codebaseid}/commits`);
    const id = await transact(stage.ctx, (tx) =>
      addCommit(tx, {
        codebaseid,
        author: 'x',
        committer: null,
        comments: 'again',
        when_timestamp: 1,
        revision: known!.revision as string,
        parent_commitid: null,
      }),
    );
    expect(id).toBe(known!.commitid);
    // A new codebase, announced after it: once its event is here, anything before it is too.
    const projectid = (await transact(stage.ctx, (tx) => projectIdOf(tx.q, 'example')))!;
    const other = await transact(stage.ctx, async (tx) => {
      const { id, created } = await findCodebaseId(tx, projectid, 'other');
      await updateCodebaseInfo(tx, id, { projectid, slug: 'other' }, created);
      return id;
    });
    await waitFor('the marker', () => keys().length > before, { everyMs: 5, gaveUp: sse.gone });
    expect(keys().slice(before)).toEqual([`codebases/${other}/update`]);
  });

  it('are refused naming a project that is not configured, or twice in one project', () => {
    expect(
      problems(`
projects: [{ name: example }]
codebases: [{ name: main, project: nope }, { name: main, project: example }, { name: main, project: example }]
change_sources: [{ name: p, type: git, repourl: r, codebase: { name: main, project: gone } }]`),
    ).toEqual([
      'codebases[0].project: no project named "nope"',
      'codebases[2].name: duplicate name "main" in project "example"',
      'change_sources[0].codebase.project: no project named "gone"',
    ]);
  });
});
