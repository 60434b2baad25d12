// Buildbot's Try_Jobdir (buildbot/schedulers/trysched.py, over util/maildir.py): the jobdir
// is a maildir; `buildbot tryserver` writes each job into tmp/ and renames it into new/.
// While this master owns the scheduler it takes each file of new/ (on a change the directory
// watch reports, and on every ownership round, in case a watch event was missed or the
// directory is on a file system that sends none), in name order: the job is parsed
// (try-job.ts), its build set added (try-buildset.ts), and in the same transaction the file
// moved to cur/, so a job is built once, even by two masters sharing the directory (the
// rename succeeds for one of them). A job refused (malformed, over MAX_TRY_JOB_BYTES, a
// builder not the scheduler's, a field longer than its column) is moved to cur/ and logged
// with why, as Buildbot logs it.
import { type FSWatcher, watch } from 'node:fs';
import { mkdir, open, readdir, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SchedulerConfig } from '../../core/config/master-config.js';
import { Scheduler } from './scheduler.js';
import { addTryBuildset, tryBuilders, tryFieldTooLong } from './try-buildset.js';
import { BadJobFile, MAX_TRY_JOB_BYTES, parseTryJob } from './try-job.js';

type TryJobdirConfig = Extract<SchedulerConfig, { type: 'try_jobdir' }>;

export class TryJobdirScheduler extends Scheduler<TryJobdirConfig> {
  private watcher: FSWatcher | null = null;
  private scanning = false;

  private get dir(): string {
    return resolve(this.config.jobdir);
  }

  protected async activate(): Promise<void> {
    for (const sub of ['new', 'cur', 'tmp']) await mkdir(join(this.dir, sub), { recursive: true });
    try {
      this.watcher = watch(join(this.dir, 'new'), () => this.scan());
      this.watcher.on('error', () => this.closeWatch());
    } catch (err) {
      // The rounds still find the jobs.
      this.deps.log.warn({ scheduler: this.name, err: (err as Error).message }, 'jobdir not watched');
    }
    this.scan();
  }

  protected async deactivate(): Promise<void> {
    this.closeWatch();
  }

  override tick(): void {
    super.tick();
    this.scan();
  }

  private closeWatch(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  /** Take every job in new/ (one scan queued at a time: a burst of watch events is one scan). */
  private scan(): void {
    if (!this.active || this.scanning) return;
    this.scanning = true;
    void this.run('jobdir', async () => {
      this.scanning = false;
      if (!this.active) return;
      const names = (await readdir(join(this.dir, 'new'))).sort();
      for (const name of names) if (this.active) await this.take(name);
    });
  }

  private async take(name: string): Promise<void> {
    const from = join(this.dir, 'new', name);
    const to = join(this.dir, 'cur', name);
    const file = { scheduler: this.name, file: from };
    try {
      const job = parseTryJob(await readBounded(from));
      const builders = tryBuilders(this.config, job.builderNames);
      if (builders.length === 0)
        throw new BadJobFile(`it names a builder not among ${JSON.stringify(this.config.builders)}`);
      const reason = job.who ? `'try' job by user ${job.who}` : "'try' job";
      const tooLong = tryFieldTooLong(job, reason);
      if (tooLong) throw new BadJobFile(tooLong);
      const added = await this.owned(async (tx) => {
        const a = await addTryBuildset(tx, this.config, job, builders, reason, this.deps.log);
        await rename(from, to);
        return a;
      });
      this.deps.log.info({ ...file, bsid: added.bsid, jobid: job.jobid, builders }, 'try job accepted');
    } catch (err) {
      // Gone: taken by another master sharing the directory.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      if (!(err instanceof BadJobFile)) throw err;
      this.deps.log.warn({ ...file, reason: err.message }, 'try job refused');
      await rename(from, to).catch(() => undefined);
    }
  }
}

/** A job file's bytes, refused unread past MAX_TRY_JOB_BYTES. */
async function readBounded(path: string): Promise<Buffer> {
  const f = await open(path, 'r');
  try {
    const buf = Buffer.alloc(MAX_TRY_JOB_BYTES + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await f.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > MAX_TRY_JOB_BYTES) throw new BadJobFile(`the job file is over ${MAX_TRY_JOB_BYTES} bytes`);
    return buf.subarray(0, n);
  } finally {
    await f.close();
  }
}
