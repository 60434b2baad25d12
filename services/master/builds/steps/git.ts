// A git step (Buildbot's Git source step, buildbot/steps/source/git.py): check out the build's
// source stamp for the step's codebase (its branch and revision, else the step's branch and
// the branch's head) into the step's workdir, and set got_revision.
//
// Buildbot's sequence, command for command:
// - mode incremental: a workdir with .git is fetched (`git fetch -f -t REPO BRANCH`, unless
//   the revision is there already) and checked out (`checkout -f REV|FETCH_HEAD`, then
//   `checkout -B BRANCH`); an empty or missing one is cloned; anything else is clobbered;
// - mode full: clobber (remove, clone), copy (incremental into `source`, then copied to the
//   workdir), clean (`git clean -f -f -d`, then fetch) or fresh (the default: `clean -f -f
//   -d -x`, or clobber when that fails);
// - submodules: `submodule sync` and `submodule update --init --recursive [--force
//   --checkout] [--remote]`, cleaned with `submodule foreach --recursive git clean ...`;
// - retryFetch fetches once more after a failed fetch; clobberOnFailure clobbers and clones
//   instead; retry [delay, n] clobbers and clones again n times after a failed clone;
// - got_revision (and with getDescription, commit-description) is a property, a dict by
//   codebase when the step has one.
// - a source stamp with a patch (a try build's): a `patch` log with its text, then after the
//   checkout (Buildbot's Source.patch and Git.applyPatch; ./source-patch.ts) the patch and a `.buildbot-patched`
//   marker downloaded into the workdir (or the patch's subdir under it), `git update-index
//   --refresh`, `git apply --index -p LEVEL .buildbot-diff` (Buildbot feeds the patch on
//   stdin; a command here has none, so git reads the downloaded file), and the file removed;
//   a later build in a workdir with the marker first runs `git clean -f -f -d -x`.
// The directory operations Buildbot asks of its worker (listdir, rmdir, cpdir, stat) are
// commands here too (`ls -A`, `rm -rf`, `cp -a`, `test -e`), so the step runs the same on a
// Flotilla agent and on buildbot-worker (POSIX workers).
import { posix } from 'node:path';
import { builderDir, type StepConfig } from '../../../core/config/master-config.js';
import {
  addLog,
  appendLog,
  finishLog,
  type PatchFacts,
  setBuildProperty,
  sourceStampPatch,
  transact,
} from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import { interruptedResults } from '../interruption.js';
import { stepSummary } from '../summary.js';
import { completeLog } from './complete-log.js';
import { RemoteCommands, StepEnded, StepFailed } from './remote.js';
import { applyPatch, PATCHED } from './source-patch.js';
import type { StepContext, StepKind, StepOutcome } from './step.js';

type GitStep = Extract<StepConfig, { type: 'git' }>;

const GIT_HASH_LENGTH = 40;

/** Buildbot's Source descriptions: "updating" while it runs, "update" once done, plus the codebase. */
const done = (step: GitStep) => (step.codebase ? `update ${step.codebase}` : 'update');

export const git: StepKind<GitStep> = {
  defaultName: 'git',
  // Buildbot names a source step of a codebase NAME-CODEBASE.
  nameOf: (step) => (step.codebase ? `git-${step.codebase}` : 'git'),
  describe: (step) => done(step),
  async run(c, signal) {
    const { step } = c;
    const summary = (results: number) => stepSummary(c.text, results);
    const ss = step.alwaysUseLatest ? null : c.build.sourcestamps.find((s) => s.codebase === step.codebase);
    if (!step.alwaysUseLatest && !ss) {
      await transact(c.deps.ctx, async (tx) => {
        const logid = await addLog(tx, c.stepid, 'log', 't');
        await appendLog(tx, logid, `No sourcestamp found in build for codebase '${step.codebase}'\n`);
        await finishLog(tx, logid);
      });
      return { results: Results.FAILURE, summary: `Codebase ${step.codebase} not in build` };
    }
    const repourl = step.repourl !== undefined ? c.render(step.repourl) : (ss?.repository ?? '');
    const patch = ss ? await sourceStampPatch(c.deps.ctx.db, ss.ssid) : undefined;
    // Buildbot shows the patch before it checks out (Source.run's addCompleteLog).
    if (patch) await completeLog(c, 'patch', patch.body.toString('utf8'));
    const checkout = new Checkout(c, await RemoteCommands.open(c, signal), signal, {
      repourl,
      branch: ss?.branch || c.render(step.branch),
      revision: ss?.revision || null,
      patch: patch ?? null,
    });
    try {
      if (!repourl) throw new StepFailed('no repourl, and no repository in the source stamp');
      await checkout.run();
      return { results: Results.SUCCESS, summary: summary(Results.SUCCESS) };
    } catch (err) {
      return ended(err, signal, summary);
    } finally {
      await checkout.cmd.finish();
    }
  },
};

function ended(err: unknown, signal: AbortSignal, summary: (r: number) => string): StepOutcome {
  if (err instanceof StepEnded) {
    return {
      results: err.results,
      summary: summary(err.results),
      ...(err.workerLost ? { workerLost: err.workerLost } : {}),
    };
  }
  if (err instanceof StepFailed) return { results: Results.FAILURE, summary: summary(Results.FAILURE) };
  if (signal.aborted)
    return { results: interruptedResults(signal), summary: summary(interruptedResults(signal)) };
  throw err;
}

class Checkout {
  private workdir: string;
  private readonly step: GitStep;
  private retry: [number, number] | null;

  constructor(
    private readonly c: StepContext<GitStep>,
    readonly cmd: RemoteCommands,
    private readonly signal: AbortSignal,
    private readonly src: {
      repourl: string;
      branch: string;
      revision: string | null;
      patch: PatchFacts | null;
    },
  ) {
    this.step = c.step;
    this.workdir = this.path(c.step.workdir);
    this.retry = c.step.retry ? [...c.step.retry] : null;
  }

  private path(rel: string): string {
    return `${builderDir(this.c.build.builder)}/${rel}`;
  }

  private get env(): Record<string, string> {
    return Object.fromEntries(Object.entries(this.step.env).map(([k, v]) => [k, this.c.render(v)]));
  }

  /** `git ARGS` in the workdir (Buildbot's _dovccmd): SIGTERM first, so git leaves no lock files. */
  private git(
    args: string[],
    o: { abandonOnFailure?: boolean; collectStdout?: boolean; workdir?: string } = {},
  ) {
    const config = Object.entries(this.step.config).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    return this.cmd.run(['git', ...config, ...args], {
      workdir: this.workdir,
      env: this.env,
      sigtermTime: 1,
      ...o,
    });
  }

  private get method(): 'clean' | 'fresh' | 'clobber' | 'copy' | null {
    if (this.step.mode === 'incremental') return null;
    return this.step.method ?? 'fresh';
  }

  async run(): Promise<void> {
    const version = await this.git(['--version'], { collectStdout: true, abandonOnFailure: false });
    if (version.rc !== 0) throw new StepFailed('git is not installed on worker');
    if (await this.patched()) await this.git(['clean', '-f', '-f', '-d', '-x']);
    if (this.step.mode === 'incremental') await this.incremental();
    else await this.full();
    if (this.src.patch)
      await applyPatch(this.c, this.cmd, this.signal, this.workdir, this.src.patch, (args, workdir) =>
        this.git(args, { workdir }),
      );
    await this.gotRevision();
  }

  /** The workdir holds a patched tree from an earlier build (Buildbot's sourcedirIsPatched). */
  private async patched(): Promise<boolean> {
    const marker = posix.join(this.workdir.slice(this.c.build.builder.name.length + 1), PATCHED);
    const r = await this.cmd.run(['test', '-e', marker], {
      workdir: this.c.build.builder.name,
      abandonOnFailure: false,
      quiet: true,
    });
    return r.rc === 0;
  }

  private async full(): Promise<void> {
    const method = this.method;
    if (method === 'clobber') return this.clobber();
    if (method === 'copy') return this.copy();
    const action = await this.updatable();
    if (action === 'clobber') return this.clobber();
    if (action === 'clone') return this.fullCloneOrFallback();
    if (method === 'clean') return this.clean();
    return this.fresh();
  }

  private async incremental(): Promise<void> {
    const action = await this.updatable();
    if (action === 'clobber') return this.clobber();
    if (action === 'clone') return this.fullCloneOrFallback();
    await this.fetchOrFallback();
    await this.syncSubmodule();
    await this.updateSubmodule();
  }

  /** Buildbot's _sourcedirIsUpdatable over listdir: `update` (.git is there), `clone` (empty), else `clobber`. */
  private async updatable(): Promise<'update' | 'clone' | 'clobber'> {
    const r = await this.cmd.run(['ls', '-A'], { workdir: this.workdir, collectStdout: true });
    const files = r.stdout.split('\n').filter(Boolean);
    if (files.includes('.git')) return 'update';
    return files.length ? 'clobber' : 'clone';
  }

  private async clean(): Promise<void> {
    await this.git(['clean', '-f', '-f', '-d']);
    await this.fetchOrFallback();
    await this.syncSubmodule();
    await this.updateSubmodule();
    await this.cleanSubmodule();
    if (this.step.submodules) await this.git(['clean', '-f', '-f', '-d']);
  }

  private async fresh(): Promise<void> {
    const cleaned = await this.git(['clean', '-f', '-f', '-d', '-x'], { abandonOnFailure: false });
    if (cleaned.rc === 0) await this.fetchOrFallback();
    else {
      await this.rmdir();
      await this.fullCloneOrFallback();
    }
    await this.syncSubmodule();
    await this.updateSubmodule();
    await this.cleanSubmodule();
    if (this.step.submodules) await this.git(['clean', '-f', '-f', '-d', '-x']);
  }

  private async clobber(): Promise<void> {
    await this.rmdir();
    if ((await this.fullClone(this.step.shallow)) !== 0) throw new StepFailed('clone failed');
  }

  private async copy(): Promise<void> {
    const target = this.step.workdir;
    await this.rmdir();
    this.workdir = this.path('source');
    try {
      await this.incremental();
    } finally {
      this.workdir = this.path(target);
    }
    await this.cmd.run(['cp', '-a', 'source', target], { workdir: this.path('.') });
  }

  /** Remove the workdir (Buildbot's rmdir), from its parent. */
  private async rmdir(): Promise<void> {
    const dir = builderDir(this.c.build.builder);
    const name = this.workdir.slice(dir.length + 1);
    await this.cmd.run(['rm', '-rf', name], { workdir: dir });
  }

  private async fetch(abandonOnFailure: boolean): Promise<number> {
    const { repourl, branch, revision } = this.src;
    let needed = true;
    if (revision)
      needed = (await this.git(['cat-file', '-e', revision], { abandonOnFailure: false })).rc !== 0;
    if (needed) {
      const args = ['fetch', '-f', '-t', repourl, branch, ...(this.step.progress ? ['--progress'] : [])];
      const r = await this.git(args, { abandonOnFailure });
      if (r.rc !== 0) return r.rc;
    }
    const r = await this.git(['checkout', '-f', revision ?? 'FETCH_HEAD'], { abandonOnFailure });
    if (r.rc === 0 && branch !== 'HEAD')
      await this.git(['checkout', '-B', branch], { abandonOnFailure: false });
    return r.rc;
  }

  private async fetchOrFallback(): Promise<void> {
    const abandon = !this.step.retryFetch && !this.step.clobberOnFailure;
    if ((await this.fetch(abandon)) === 0) return;
    if (this.step.retryFetch) await this.fetch(true);
    else if (this.step.clobberOnFailure) await this.clobber();
    else throw new StepFailed('fetch failed');
  }

  private async clone(shallow: boolean | number): Promise<number> {
    const { repourl, branch } = this.src;
    const args = ['clone'];
    let switchToBranch = false;
    if (branch !== 'HEAD') {
      // A ref (refs/pull/1/head) cannot be cloned directly: clone, then fetch it.
      if (branch.startsWith('refs/')) {
        args.push('--no-checkout');
        switchToBranch = true;
      } else args.push('--branch', branch);
    }
    if (shallow !== false) args.push('--depth', String(shallow === true ? 1 : shallow));
    if (this.step.reference) args.push('--reference', this.step.reference);
    if (this.step.origin) args.push('--origin', this.step.origin);
    args.push(repourl, '.');
    if (this.step.progress) args.push('--progress');
    const abandon = shallow !== false && !(this.retry && this.retry[1] > 0);
    let rc = (await this.git(args, { abandonOnFailure: abandon })).rc;
    if (switchToBranch && rc === 0) rc = await this.fetch(true);
    if (rc !== 0 && this.retry && this.retry[1] > 0 && !this.signal.aborted) {
      const [delay, repeats] = this.retry;
      this.retry = [delay, repeats - 1];
      await this.cmd.header(`Checkout failed, trying ${repeats} more times after ${delay} seconds`);
      await pause(delay * 1000, this.signal);
      await this.rmdir();
      return this.clone(shallow);
    }
    return rc;
  }

  private async fullClone(shallow: boolean | number = false): Promise<number> {
    const rc = await this.clone(shallow);
    if (rc !== 0) return rc;
    const abandon = shallow !== false;
    let res = rc;
    if (this.src.revision)
      res = (await this.git(['checkout', '-f', this.src.revision], { abandonOnFailure: abandon })).rc;
    if (this.step.submodules) {
      const args = [
        'submodule',
        'update',
        '--init',
        '--recursive',
        ...(this.step.remoteSubmodules ? ['--remote'] : []),
      ];
      res = (await this.git(args, { abandonOnFailure: abandon })).rc;
    }
    return res;
  }

  private async fullCloneOrFallback(): Promise<void> {
    if ((await this.fullClone()) === 0) return;
    if (!this.step.clobberOnFailure) throw new StepFailed('clone failed');
    await this.clobber();
  }

  private async syncSubmodule(): Promise<void> {
    if (this.step.submodules) await this.git(['submodule', 'sync']);
  }

  private async updateSubmodule(): Promise<void> {
    if (!this.step.submodules) return;
    const args = ['submodule', 'update', '--init', '--recursive', '--force', '--checkout'];
    await this.git([...args, ...(this.step.remoteSubmodules ? ['--remote'] : [])]);
  }

  private async cleanSubmodule(): Promise<void> {
    if (!this.step.submodules) return;
    const sub = `git clean -f -f -d${this.method === 'fresh' ? ' -x' : ''}`;
    await this.git(['submodule', 'foreach', '--recursive', sub]);
  }

  /** got_revision (Buildbot's updateSourceProperty: a dict by codebase when the step has one). */
  private async gotRevision(): Promise<void> {
    const revision = (await this.git(['rev-parse', 'HEAD'], { collectStdout: true })).stdout.trim();
    if (revision.length !== GIT_HASH_LENGTH) throw new StepFailed(`not a revision: ${revision}`);
    await this.setSourceProperty('got_revision', revision);
    if (this.step.getDescription) {
      const d = await this.git(['describe', 'HEAD'], { collectStdout: true, abandonOnFailure: false });
      if (d.rc === 0) await this.setSourceProperty('commit-description', d.stdout.trim());
    }
  }

  private async setSourceProperty(name: string, value: string): Promise<void> {
    const { codebase } = this.step;
    const { buildid } = this.c.build;
    const current = this.c.props[name]?.[0];
    // What git printed, redacted as every stored property is (a secret in the repository's URL).
    const shown = this.c.build.redactor.clean(value);
    const v =
      codebase === ''
        ? shown
        : { ...(typeof current === 'object' && current !== null ? current : {}), [codebase]: shown };
    await transact(this.c.deps.ctx, (tx) => setBuildProperty(tx, buildid, name, v, 'Git'));
    this.c.props = { ...this.c.props, [name]: [v, 'Git'] };
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
