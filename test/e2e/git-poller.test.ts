// A git change source on a real repository: the master that owns it records the branch
// heads on its first poll (no flood of history), then turns every new commit into a change
// with Buildbot's fields, oldest first, and after a force push only the new head.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster } from './cluster.js';

const repo = mkdtempSync(join(tmpdir(), 'flotilla-poll-repo-'));
let c: Cluster;

function git(...args: string[]): string {
  return execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Ada Lovelace',
      GIT_AUTHOR_EMAIL: 'ada@example.test',
      GIT_COMMITTER_NAME: 'Grace Hopper',
      GIT_COMMITTER_EMAIL: 'grace@example.test',
    },
  }).trim();
}

function commit(file: string, message: string): string {
  writeFileSync(join(repo, file), `${message}\n`);
  git('add', file);
  git('commit', '--quiet', '-m', message);
  return git('rev-parse', 'HEAD');
}

async function lastRev(): Promise<Record<string, string> | undefined> {
  const [row] = await c.db.pool.query(sql`
    SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
    WHERE o.name = 'repo-poller' AND o.class_name = 'GitPoller' AND s.name = 'lastRev'`);
  return row ? JSON.parse(row.value_json) : undefined;
}

const changesOf = async () =>
  (await c.get(`/changes?repository=${encodeURIComponent(repo)}&order=changeid`)).changes;

let first: string;
beforeAll(async () => {
  git('init', '--quiet', '--initial-branch=main');
  first = commit('a.txt', 'first');
  c = await Cluster.start({
    config: {
      change_sources: [
        {
          name: 'repo-poller',
          type: 'git',
          repourl: repo,
          branches: ['main', 'release'],
          poll_interval: 1,
          project: 'demo',
          category: 'e2e',
        },
      ],
    },
  });
  await c.startMaster('m1');
});
afterAll(async () => {
  await c?.stop();
  rmSync(repo, { recursive: true, force: true });
});

describe('a git change source', () => {
  it('runs on one master and records the heads on its first poll, making no change', async () => {
    await waitFor('the first poll', async () => (await lastRev())?.main === first);
    expect(await lastRev()).toEqual({ main: first });
    expect(await changesOf()).toEqual([]);
    const source = (await c.get('/changesources')).changesources.find((s: any) => s.name === 'repo-poller');
    expect(source.master.name).toBe('m1');
  });

  it('turns each new commit into a change, oldest first, with its author, files and time', async () => {
    const second = commit('b.txt', 'second: add b');
    const third = commit('a.txt', 'third\n\nwith a body');
    await waitFor('the poller to record two changes', async () => (await changesOf()).length === 2, {
      gaveUp: c.noMaster,
    });
    const [b, t] = await changesOf();
    expect(b).toMatchObject({
      revision: second,
      author: 'Ada Lovelace <ada@example.test>',
      committer: 'Grace Hopper <grace@example.test>',
      comments: 'second: add b',
      files: ['b.txt'],
      branch: 'main',
      project: 'demo',
      category: 'e2e',
      repository: repo,
      codebase: '',
    });
    expect(t).toMatchObject({ revision: third, comments: 'third\n\nwith a body', files: ['a.txt'] });
    expect(t.when_timestamp).toBe(Number(git('show', '-s', '--format=%ct', third)));
    expect((await lastRev())?.main).toBe(third);
  });

  it('after a force push, makes a change of the new head only', async () => {
    // The new history is made aside, then main moved to it in one step, as a force push
    // lands: a poll between a reset and a commit would see a head of its own.
    git('checkout', '--quiet', '--detach', first);
    const rewritten = commit('c.txt', 'rewritten history');
    git('update-ref', 'refs/heads/main', rewritten);
    git('checkout', '--quiet', 'main');
    await waitFor('the rewritten head', async () => (await changesOf()).length === 3);
    expect((await changesOf())[2]).toMatchObject({ revision: rewritten, files: ['c.txt'] });
  });
});
