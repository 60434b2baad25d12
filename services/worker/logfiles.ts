// Following a command's logfiles while it runs, as buildbot-worker's LogFileWatcher does:
// each file's state (size and times) is taken before the command starts; the file is read
// only once it differs from that (a file left by an earlier build is not sent again unless
// it is written to), from its start, or with `follow` from where it ended when the command
// started; then whatever is added, every POLL_MS and once more when the command ends. Text is
// decoded as UTF-8 across reads (a character split between two reads is kept whole).
import { type FileHandle, open, realpath, stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

export const POLL_MS = 1000;
const READ_BYTES = 64 * 1024;
/** At most this much of one file is sent; the rest is dropped (a runaway log must not fill the master). */
export const MAX_LOGFILE_BYTES = 64 * 1024 * 1024;

type Stamp = string | null;

async function stampOf(path: string): Promise<Stamp> {
  try {
    const s = await stat(path);
    return `${s.ctimeMs}:${s.mtimeMs}:${s.size}`;
  } catch {
    return null;
  }
}

class Watched {
  private handle: FileHandle | null = null;
  private position = 0;
  private sent = 0;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(
    readonly name: string,
    private readonly path: string,
    private readonly follow: boolean,
    private initial: Stamp,
    /** The step's directory: the file must be in it once links are followed. */
    private readonly dir: string,
    /** With a step user, the file must be theirs. */
    private readonly owner: number | undefined,
  ) {}

  /**
   * The file is the step's: a link out of its directory, or to what its user may not read
   * (the agent's password file), is no log.
   */
  private async openOwn(): Promise<FileHandle | null> {
    // Resolved here, not before the command: its directory may not exist until it starts.
    const [real, realDir] = await Promise.all([realpath(this.path), realpath(this.dir)]);
    if (!real.startsWith(realDir + sep)) return null;
    const handle = await open(real, 'r');
    const st = await handle.stat();
    if (!st.isFile() || (this.owner !== undefined && st.uid !== this.owner)) {
      await handle.close();
      return null;
    }
    return handle;
  }

  /** Read what is new; each piece of text goes to `emit`. */
  async poll(emit: (name: string, text: string) => void): Promise<void> {
    if (!this.handle) {
      const now = await stampOf(this.path);
      if (now === this.initial) return;
      if (now === null) {
        // Deleted since the start: whatever comes next is a new file.
        this.initial = null;
        return;
      }
      try {
        this.handle = await this.openOwn();
      } catch {
        return;
      }
      if (!this.handle) return;
      // With follow, from where the file ended when the command started (buildbot-worker
      // seeks to its size when it first sees the change, losing what was added before that
      // look); a file that was not there, or is now shorter (rewritten), from its start.
      const before = this.initial === null ? 0 : Number(this.initial.split(':')[2]);
      const size = Number(now.split(':')[2]);
      this.position = this.follow && before <= size ? before : 0;
    }
    const buf = Buffer.alloc(READ_BYTES);
    for (;;) {
      if (this.sent >= MAX_LOGFILE_BYTES) return;
      const { bytesRead } = await this.handle.read(buf, 0, buf.length, this.position);
      if (bytesRead === 0) return;
      this.position += bytesRead;
      this.sent += bytesRead;
      const text = this.decoder.decode(buf.subarray(0, bytesRead), { stream: true });
      if (text) emit(this.name, text);
    }
  }

  async close(emit: (name: string, text: string) => void): Promise<void> {
    const rest = this.decoder.decode();
    if (rest) emit(this.name, rest);
    await this.handle?.close();
    this.handle = null;
  }
}

export class LogfileWatchers {
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private paused = false;

  private constructor(
    private readonly files: Watched[],
    private readonly emit: (name: string, text: string) => void,
  ) {}

  /** Take each file's state now (before the command starts); `emit` hears their text. */
  static async start(
    dir: string,
    logfiles: Record<string, { filename: string; follow: boolean }>,
    inside: (path: string) => boolean,
    owner: number | undefined,
    emit: (name: string, text: string) => void,
  ): Promise<LogfileWatchers> {
    const files: Watched[] = [];
    for (const [name, f] of Object.entries(logfiles)) {
      const path = resolve(dir, f.filename);
      if (!inside(path)) continue;
      files.push(new Watched(name, path, f.follow, await stampOf(path), dir, owner));
    }
    const w = new LogfileWatchers(files, emit);
    if (files.length) w.timer = setInterval(() => w.tick(), POLL_MS);
    return w;
  }

  /** Hold back (the master has too much unacknowledged) or go on. */
  pause(paused: boolean): void {
    this.paused = paused;
  }

  private tick(): void {
    if (this.paused) return;
    this.polling = this.polling.then(() => this.pollAll());
  }

  private async pollAll(): Promise<void> {
    for (const f of this.files) await f.poll(this.emit).catch(() => {});
  }

  /** The command ended: one last look at each file, then let go of them. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    await this.pollAll();
    for (const f of this.files) await f.close(this.emit).catch(() => {});
  }
}
