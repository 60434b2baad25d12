// What the git poller suites share: a scratch repository in a directory of its own, with git
// run in it as author A and committer C, and a commit that writes its message to one file
// and answers its revision; and a poller on it, parsed from a change source's YAML.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type PolledChangeSourceConfig,
  parseMasterConfig,
} from '../../../services/core/config/master-config.js';
import type { DataContext } from '../../../services/core/data/index.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { GitPoller } from '../../../services/master/changesources/git-poller.js';

export interface ScratchRepo {
  /** The directory holding the repository (`repo`) and the pollers' mirrors (`master`). */
  root: string;
  repo: string;
  git(...args: string[]): string;
  /** A commit on the current branch; its revision. */
  commit(message: string): string;
  /** A poller of the configuration `yaml` (its first change source) on this database. */
  poller(yaml: string, ctx: DataContext): GitPoller;
  remove(): void;
}

export function scratchRepo(prefix: string): ScratchRepo {
  const root = mkdtempSync(join(tmpdir(), prefix));
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
  execFileSync('git', ['init', '--quiet', '-b', 'main', repo]);
  return {
    root,
    repo,
    git,
    commit: (message) => {
      writeFileSync(join(repo, 'f'), `${message}\n`);
      git('add', 'f');
      git('commit', '--quiet', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    poller: (yaml, ctx) => {
      const cfg = parseMasterConfig(yaml).change_sources[0]!;
      return new GitPoller(cfg as PolledChangeSourceConfig & { repourl: string }, {
        ctx,
        log: createLogger('test', 'silent'),
        workdir: join(root, 'master'),
        env: process.env,
      });
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
