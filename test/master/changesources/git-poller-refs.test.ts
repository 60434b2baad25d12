// GitPoller's `branches: true`, `only_tags` and `workdir` (issue 31 §2 item 4), in Buildbot
// 3.7's meaning (buildbot/changes/gitpoller.py): a poller on a real repository and a real
// database, polled by hand. The first poll records the heads (full refs as lastRev keys);
// after it, a new commit on a branch, a new branch and a new tag each bring their new commits,
// a branch's named without `refs/heads/`, a tag's as `refs/tags/NAME`.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { problems } from '../../config/problems.js';
import { Stage } from '../in-process.js';
import { scratchRepo } from './scratch-repo.js';

const scratch = scratchRepo('flotilla-poller-refs-');
const { root, repo, git, commit } = scratch;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
  commit('one');
  git('branch', 'feature');
  git('tag', '-a', 'v1', '-m', 'v1');
}, 120_000);
afterAll(async () => {
  await stage?.close();
  scratch.remove();
});

const poller = (name: string, keys: string) =>
  scratch.poller(`change_sources: [{ name: ${name}, type: git, repourl: ${repo}, ${keys} }]`, stage.ctx);

async function lastRev(name: string): Promise<Record<string, string>> {
  const [row] = await stage.db.pool.query(sql`
    SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
    WHERE o.name = ${name} AND o.class_name = 'GitPoller' AND s.name = 'lastRev'`);
  return JSON.parse(row.value_json);
}

const changes = async () =>
  (await stage.db.pool.query(sql`SELECT branch, revision FROM changes ORDER BY changeid`)).map((r) => [
    r.branch,
    r.revision,
  ]);

describe('GitPoller refs', () => {
  it('polls every branch, or every tag, as Buildbot 3.7, into the workdir given', async () => {
    const all = poller('all', 'branches: true, workdir: mirrors/all');
    const tags = poller('tags', 'only_tags: true');
    await all.pollNow();
    await tags.pollNow();
    expect(existsSync(join(root, 'master', 'mirrors', 'all', 'HEAD'))).toBe(true);
    const one = git('rev-parse', 'main');
    expect(await lastRev('all')).toEqual({ 'refs/heads/main': one, 'refs/heads/feature': one });
    expect(Object.keys(await lastRev('tags'))).toEqual(['refs/tags/v1']);
    expect(await changes()).toEqual([]);

    git('checkout', '--quiet', 'feature');
    const two = commit('two');
    git('checkout', '--quiet', '-b', 'fresh');
    const three = commit('three');
    git('tag', '-a', 'v2', '-m', 'v2');
    await all.pollNow();
    await tags.pollNow();
    expect(await changes()).toEqual([
      ['feature', two],
      ['fresh', three],
      ['refs/tags/v2', two],
      ['refs/tags/v2', three],
    ]);
  });

  it('refuses branches with only_tags, as Buildbot', () => {
    expect(
      problems('change_sources: [{ name: p, type: git, repourl: r, branches: [main], only_tags: true }]'),
    ).toEqual(['change_sources[0].only_tags: give branches or only_tags, not both (Buildbot refuses both)']);
  });
});
