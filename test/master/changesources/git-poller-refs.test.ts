// GitPoller's `branches: true`, `only_tags` and `workdir` (issue 31 §2 item 4), in Buildbot
// 3.7's meaning (buildbot/changes/gitpoller.py): a poller on a real repository and a real
// database, polled by hand. The first poll records the heads (full refs as lastRev keys);
// after it, a new commit on a branch, a new branch and a new tag each bring their new commits,
// a branch's named without `refs/heads/`, a tag's as `refs/tags/NAME`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PolledChangeSourceConfig,
  parseMasterConfig,
} from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { GitPoller } from '../../../services/master/changesources/git-poller.js';
import { problems } from '../../config/problems.js';
import { Stage } from '../in-process.js';

const root = mkdtempSync(join(tmpdir(), 'flotilla-poller-refs-'));
const repo = join(root, 'repo');
const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@x',
      GIT_COMMITTER_NAME: 'C',
      GIT_COMMITTER_EMAIL: 'c@x',
    },
  }).trim();
const commit = (message: string) => {
  writeFileSync(join(repo, 'f'), `${message}\n`);
  git('add', 'f');
  git('commit', '--quiet', '-m', message);
  return git('rev-parse', 'HEAD');
};

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
  execFileSync('git', ['init', '--quiet', '-b', 'main', repo]);
  commit('one');
  git('branch', 'feature');
  git('tag', '-a', 'v1', '-m', 'v1');
}, 120_000);
afterAll(async () => {
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

function poller(name: string, keys: string) {
  const cfg = parseMasterConfig(`change_sources: [{ name: ${name}, type: git, repourl: ${repo}, ${keys} }]`)
    .change_sources[0]!;
  return new GitPoller(cfg as PolledChangeSourceConfig & { repourl: string }, {
    ctx: stage.ctx,
    log: createLogger('test', 'silent'),
    workdir: join(root, 'master'),
    env: process.env,
  });
}

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
