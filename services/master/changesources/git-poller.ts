// A git change source (Buildbot's GitPoller): every poll_interval, the master that owns it
// asks the repository for its refs and turns the commits that are new on each configured
// branch (a list; every branch with `branches: true`; every tag with `only_tags`) into
// changes, oldest first. As Buildbot 3.7 keys them: a listed branch by its name, the others
// by their full ref (`refs/heads/x`, `refs/tags/v1`), in lastRev; a change's branch is the
// name without `refs/heads/` (a tag's keeps `refs/tags/`).
//
// Buildbot facts (buildbot/changes/gitpoller.py): the last revision seen on each branch is
// kept in object_state (key `lastRev`, a {branch: revision} object, under the poller's name
// and class GitPoller), so whichever master polls next carries on; the first poll of a
// branch only records its head and makes no change (no flood of history); a change has the
// commit's author and committer ("name <email>"), message, revision, commit time and files,
// the repository URL, the branch, the configured project, category and codebase, and src
// 'git'.
// Ours: the commits are fetched into a bare mirror under MASTER_WORKDIR; when the old head
// is no longer an ancestor of the new one (a force push), only the new head becomes a change;
// at most MAX_CHANGES_PER_POLL commits are taken per branch and poll (the newest), so a huge
// push cannot stall the master. The changes of a branch and its new lastRev are written in
// one transaction: a poll that fails half way is simply done again.
// Buildbot 4.3 (gitpoller.py, `codebase=util.Codebase(...)`): a poller given a codebase finds
// (or creates) it in its project, which must exist, and records each new commit of a branch
// after its change, oldest first, each naming the one before as parent (the first, its git
// parent when recorded), then moves the branch (named as its lastRev key) to the newest, with
// the time of the poll (core/data/codebase-commits.ts, codebase-branches.ts). Ours: in the
// same transaction as the changes and lastRev, so the commits and events come once.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { PolledChangeSourceConfig } from '../../core/config/master-config.js';
import {
  addChange,
  addCommit,
  commitByRevision,
  type DataContext,
  findCodebaseId,
  now as nowSeconds,
  projectIdOf,
  transact,
  updateBranch,
} from '../../core/data/index.js';
import { getState, setState, stateObjectId } from '../../core/data/object-state.js';
import type { Logger } from '../../core/telemetry/logger.js';

const run = promisify(execFile);
const GIT_TIMEOUT_MS = 120_000;
const MAX_CHANGES_PER_POLL = 100;
// What one git command may print (ls-remote of a repository with very many heads, a long log).
const MAX_GIT_OUTPUT = 64 * 1024 * 1024;
const SEP = '\u001f';
/** The branches polled when the configuration names none (Buildbot's default is master). */
const DEFAULT_BRANCHES: ReadonlySet<string> = new Set(['main']);

export interface GitPollerDeps {
  ctx: DataContext;
  log: Logger;
  /** Where the bare mirrors live. */
  workdir: string;
  /** The environment git runs in (the master process's, handed down from main). */
  env: Readonly<Record<string, string | undefined>>;
}

interface Commit {
  revision: string;
  author: string;
  committer: string;
  when: number;
  comments: string;
  files: string[];
  /** The commit's parents' revisions, first parent first. */
  parents: string[];
}

export class GitPoller {
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | null = null;
  private stopped = false;
  private readonly mirror: string;
  private readonly log: Logger;
  /** What git fetches from: the repourl, with a relative local path made absolute (git runs in the mirror). */
  private readonly remote: string;
  /** The id of the codebase the commits are recorded in, once found (Buildbot 4.3's). */
  private codebaseid: number | undefined;

  constructor(
    private readonly cfg: PolledChangeSourceConfig & { repourl: string },
    private readonly deps: GitPollerDeps,
  ) {
    const hash = createHash('sha1').update(cfg.repourl).digest('hex').slice(0, 16);
    this.mirror = cfg.workdir ? resolve(deps.workdir, cfg.workdir) : join(deps.workdir, 'gitpoller', hash);
    this.log = deps.log.child({ changesource: cfg.name });
    const local = !/^[a-z][a-z0-9+.-]*:\/\//i.test(cfg.repourl) && !/^[^/]+@[^/]+:/.test(cfg.repourl);
    this.remote = local && !isAbsolute(cfg.repourl) ? resolve(cfg.repourl) : cfg.repourl;
  }

  async start(): Promise<void> {
    this.stopped = false;
    void this.pollNow();
    this.timer = setInterval(() => void this.pollNow(), this.cfg.poll_interval * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.polling;
  }

  /** One poll (never two at once); failures are logged, and the next poll tries again. */
  pollNow(): Promise<void> {
    this.polling ??= this.poll()
      .catch((err: Error) => this.log.warn({ err: err.message }, 'git poll failed'))
      .finally(() => {
        this.polling = null;
      });
    return this.polling;
  }

  private git(args: string[]): Promise<string> {
    return run('git', args, {
      cwd: this.mirror,
      timeout: GIT_TIMEOUT_MS,
      maxBuffer: MAX_GIT_OUTPUT,
      // Never wait for a password on a terminal nobody watches.
      env: { ...this.deps.env, GIT_TERMINAL_PROMPT: '0' },
    }).then((r) => r.stdout);
  }

  private async poll(): Promise<void> {
    if (!existsSync(join(this.mirror, 'HEAD'))) {
      mkdirSync(this.mirror, { recursive: true });
      await this.git(['init', '--bare', '--quiet']);
    }
    // Each polled ref by its lastRev key: its head and its full ref.
    const heads = new Map<string, { sha: string; ref: string }>();
    const listed = Array.isArray(this.cfg.branches) ? new Set(this.cfg.branches) : null;
    const prefix = this.cfg.only_tags ? 'refs/tags/' : 'refs/heads/';
    for (const line of (await this.git(['ls-remote', '--refs', this.remote])).split('\n')) {
      const [sha, ref] = line.split('\t');
      if (!sha || !ref?.startsWith(prefix)) continue;
      if (this.cfg.only_tags || this.cfg.branches === true) heads.set(ref, { sha, ref });
      else if ((listed ?? DEFAULT_BRANCHES).has(ref.slice(prefix.length)))
        heads.set(ref.slice(prefix.length), { sha, ref });
    }
    const wanted = [...heads.keys()].sort();
    if (wanted.length === 0 || this.stopped) return;
    await this.git([
      'fetch',
      '--quiet',
      '--no-tags',
      this.remote,
      ...wanted.map((b) => `+${heads.get(b)!.ref}:refs/flotilla/${b}`),
    ]);
    const { ctx } = this.deps;
    const codebaseid = await this.codebase();
    const objectid = await transact(ctx, (tx) => stateObjectId(tx.q, this.cfg.name, 'GitPoller'));
    // Buildbot: the very first poll only records; later, a ref not seen before brings the
    // commits that are on none of the heads seen.
    const seen = ((await transact(ctx, (tx) => getState(tx.q, objectid, 'lastRev'))) ?? {}) as Record<
      string,
      string
    >;
    const firstPoll = Object.keys(seen).length === 0;
    for (const branch of wanted) {
      if (this.stopped) return;
      const head = heads.get(branch)!.sha;
      const last = ((await transact(ctx, (tx) => getState(tx.q, objectid, 'lastRev'))) ?? {}) as Record<
        string,
        string
      >;
      if (last[branch] === head) continue;
      const commits =
        last[branch] !== undefined
          ? await this.newCommits(last[branch]!, head)
          : firstPoll
            ? []
            : await this.commitsOnNone(Object.values(last), head);
      await transact(ctx, async (tx) => {
        for (const c of commits) {
          await addChange(tx, {
            author: c.author,
            committer: c.committer,
            comments: c.comments,
            revision: c.revision,
            when_timestamp: c.when,
            files: c.files,
            branch: branch.startsWith('refs/heads/') ? branch.slice('refs/heads/'.length) : branch,
            repository: this.cfg.repourl,
            project: this.cfg.project,
            codebase: typeof this.cfg.codebase === 'string' ? this.cfg.codebase : '',
            category: this.cfg.category ?? null,
            src: 'git',
          });
        }
        if (codebaseid !== undefined && commits.length > 0) {
          const first = commits[0]!.parents[0];
          let parent = first === undefined ? undefined : await commitByRevision(tx.q, codebaseid, first);
          for (const c of commits) {
            parent = await addCommit(tx, {
              codebaseid,
              author: c.author,
              committer: c.committer,
              comments: c.comments,
              when_timestamp: c.when,
              revision: c.revision,
              parent_commitid: parent ?? null,
            });
          }
          await updateBranch(tx, {
            codebaseid,
            name: branch,
            commitid: parent!,
            last_timestamp: nowSeconds(),
          });
        }
        // Read again under the transaction: another master may have moved it meanwhile.
        const now = ((await getState(tx.q, objectid, 'lastRev')) ?? {}) as Record<string, string>;
        await setState(tx.q, objectid, 'lastRev', { ...now, [branch]: head });
      });
      if (commits.length > 0) this.log.info({ branch, changes: commits.length, head }, 'new commits');
    }
  }

  /** The codebase's id when one is configured: found, or created, in its project, which must exist. */
  private async codebase(): Promise<number | undefined> {
    const cb = this.cfg.codebase;
    if (typeof cb === 'string' || this.codebaseid !== undefined) return this.codebaseid;
    this.codebaseid = await transact(this.deps.ctx, async (tx) => {
      const projectid = await projectIdOf(tx.q, cb.project);
      if (projectid === undefined) throw new Error(`project ${cb.project} is not recorded yet`);
      return (await findCodebaseId(tx, projectid, cb.name)).id;
    });
    return this.codebaseid;
  }

  /** The commits up to `to` on none of `tips`, oldest first (a new branch or tag). */
  private async commitsOnNone(tips: string[], to: string): Promise<Commit[]> {
    const revs = (
      await this.git([
        'rev-list',
        '--reverse',
        '--ignore-missing',
        `--max-count=${MAX_CHANGES_PER_POLL}`,
        to,
        ...tips.map((t) => `^${t}`),
        '--',
      ])
    )
      .split('\n')
      .filter(Boolean);
    return this.commits(revs);
  }

  /** The commits after `from` up to `to`, oldest first; just `to` when `from` is not its ancestor. */
  private async newCommits(from: string, to: string): Promise<Commit[]> {
    let revs: string[];
    try {
      await this.git(['merge-base', '--is-ancestor', from, to]);
      revs = (
        await this.git(['rev-list', '--reverse', `--max-count=${MAX_CHANGES_PER_POLL}`, `${from}..${to}`])
      )
        .split('\n')
        .filter(Boolean);
    } catch {
      // A tag's head is the tag object: the change is its commit's.
      revs = [(await this.git(['rev-parse', `${to}^{commit}`])).trim()];
    }
    return this.commits(revs);
  }

  private async commits(revs: string[]): Promise<Commit[]> {
    const commits: Commit[] = [];
    for (const revision of revs) commits.push(await this.commit(revision));
    return commits;
  }

  private async commit(revision: string): Promise<Commit> {
    const format = ['%an <%ae>', '%cn <%ce>', '%ct', '%P', '%B'].join(SEP);
    const [author = '', committer = '', when = '0', parents = '', ...message] = (
      await this.git(['show', '-s', `--format=${format}`, revision])
    ).split(SEP);
    const files = (await this.git(['diff-tree', '--no-commit-id', '--name-only', '-r', '--root', revision]))
      .split('\n')
      .filter(Boolean);
    return {
      revision,
      author,
      committer,
      when: Number(when),
      comments: message.join(SEP).replace(/\n+$/, ''),
      files,
      parents: parents.split(' ').filter(Boolean),
    };
  }
}
