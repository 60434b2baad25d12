// File transfers on the worker's side, with buildbot-worker's semantics (its upload_file,
// upload_directory and download_file commands):
// - upload: the file in blocks; a file that cannot be opened ends rc 1 ("Cannot open file
//   ... for upload"); past maxsize, what fits is sent and the transfer ends rc 1 ("Maximum
//   filesize reached, truncating file ...");
// - upload-directory: the directory as a tar archive (gz or bz2 with compress), made by the system's
//   tar, in blocks, with the same maxsize rule;
// - download: the parent directories made, each block written before it is acknowledged,
//   truncated at maxsize (rc 1), the mode set once the last block is written.
// Uploads keep at most WINDOW bytes unacknowledged, as command output does.
// With a step user (WORKER_STEP_USER, the agent as root), a transfer may touch only what that
// user could: an upload reads a regular file of theirs inside the worker's directory once
// links are followed (not the agent's password through a link), a directory is archived by
// tar running as them, and a download never follows a link and leaves its file and the
// directories it made theirs.
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, chown, type FileHandle, mkdir, open, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { CommandOutcome, TransferRequest, WorkerToMaster } from '../core/protocol/messages.js';
import type { StepUser } from './credentials.js';

const WINDOW = 1024 * 1024;
const DEFAULT_BLOCK = 256 * 1024;

interface Upload {
  inFlight: Map<number, number>;
  bytes: number;
  wake: (() => void) | null;
  stopped: string | null;
  stop: () => void;
}

interface Download {
  file: FileHandle;
  path: string;
  mode: number | null;
  maxsize: number | null;
  written: number;
  truncated: boolean;
  chain: Promise<void>;
}

export class Transfers {
  private readonly uploads = new Map<string, Upload>();
  private readonly downloads = new Map<string, Download>();
  private readonly started = new Map<string, number>();

  constructor(
    private readonly send: (m: WorkerToMaster) => void,
    /** The absolute path of a path relative to the base directory, or null if it leaves it. */
    private readonly inside: (rel: string) => string | null,
    private readonly stepUser?: StepUser,
  ) {}

  /** The file to upload, opened as the step user may (see the header); null if refused. */
  private async openForUpload(path: string): Promise<FileHandle | null> {
    if (!this.stepUser) return open(path, 'r');
    const real = await realpath(path);
    if (!this.inside(real)) return null;
    const handle = await open(real, 'r');
    const st = await handle.stat();
    if (!st.isFile() || st.uid !== this.stepUser.uid) {
      await handle.close();
      return null;
    }
    return handle;
  }

  /** The file to download into, made as the step user's (see the header). */
  private async openForDownload(path: string): Promise<FileHandle> {
    const user = this.stepUser;
    if (!user) {
      await mkdir(dirname(path), { recursive: true });
      return open(path, 'w');
    }
    const first = await mkdir(dirname(path), { recursive: true });
    if (first !== undefined)
      for (let d = dirname(path); ; d = dirname(d)) {
        await chown(d, user.uid, user.gid);
        if (d === first || d === dirname(d)) break;
      }
    if (!this.inside(await realpath(dirname(path)))) throw new Error('outside');
    const handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    );
    await handle.chown(user.uid, user.gid);
    return handle;
  }

  has(cmd: string): boolean {
    return this.started.has(cmd);
  }

  private done(cmd: string, rc: number, message?: string, interrupted = false): void {
    const began = this.started.get(cmd);
    if (began === undefined) return;
    this.started.delete(cmd);
    if (message) this.send({ type: 'output', cmd, seq: 0, stream: 'e', text: `${message}\n` });
    const outcome: CommandOutcome = {
      rc,
      signal: null,
      interrupted,
      timedOut: false,
      elapsedSeconds: (Date.now() - began) / 1000,
    };
    this.send({ type: 'done', cmd, outcome });
  }

  start(cmd: string, r: TransferRequest): void {
    if (this.started.has(cmd)) return;
    this.started.set(cmd, Date.now());
    const path = this.inside(r.path);
    if (!path) {
      this.done(cmd, 1, `refused: ${r.path} is outside the worker's directory`);
      return;
    }
    if (r.op === 'download') this.beginDownload(cmd, path, r);
    else void this.upload(cmd, path, r);
  }

  private async upload(cmd: string, path: string, r: TransferRequest): Promise<void> {
    const u: Upload = { inFlight: new Map(), bytes: 0, wake: null, stopped: null, stop: () => {} };
    this.uploads.set(cmd, u);
    let source: AsyncIterable<Buffer>;
    let handle: FileHandle | null = null;
    const blocksize = r.blocksize ?? DEFAULT_BLOCK;
    if (r.op === 'upload') {
      try {
        handle = await this.openForUpload(path);
      } catch {
        handle = null;
      }
      if (!handle) {
        this.uploads.delete(cmd);
        return this.done(cmd, 1, `Cannot open file '${path}' for upload`);
      }
      const stream = handle.createReadStream({ highWaterMark: blocksize, autoClose: false });
      // A read that waits (a pipe, a slow disk) must not hold an interrupt back.
      u.stop = () => stream.destroy();
      source = stream;
    } else {
      const tar = spawn(
        'tar',
        [
          '-c',
          ...(r.compress === 'gz' ? ['-z'] : r.compress === 'bz2' ? ['-j'] : []),
          '-f',
          '-',
          '-C',
          path,
          '.',
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          ...(this.stepUser ? { uid: this.stepUser.uid, gid: this.stepUser.gid } : {}),
        },
      );
      let err = '';
      tar.stderr.on('data', (d) => {
        err += d;
      });
      u.stop = () => tar.kill('SIGKILL');
      const exited = new Promise<number>((resolve) => tar.once('close', (code) => resolve(code ?? -1)));
      source = withExit(tar.stdout, exited, () => err);
    }
    let sent = 0;
    let seq = 0;
    try {
      for await (const chunk of source) {
        for (let at = 0; at < chunk.length; at += blocksize) {
          if (u.stopped) return this.done(cmd, -1, `interrupted: ${u.stopped}`, true);
          let block = chunk.subarray(at, at + blocksize);
          const room = r.maxsize == null ? Infinity : r.maxsize - sent;
          if (block.length > room) block = block.subarray(0, Math.max(0, room));
          if (block.length) {
            seq++;
            u.inFlight.set(seq, block.length);
            u.bytes += block.length;
            sent += block.length;
            this.send({ type: 'data', cmd, seq, data: block.toString('base64') });
            while (u.bytes > WINDOW && !u.stopped) await new Promise<void>((resolve) => (u.wake = resolve));
          }
          if (block.length < chunk.subarray(at, at + blocksize).length) {
            u.stop();
            return this.done(cmd, 1, `Maximum filesize reached, truncating file '${path}'`);
          }
        }
      }
      // Everything acknowledged before the end is reported, so the master has stored it all.
      while (u.bytes > 0 && !u.stopped) await new Promise<void>((resolve) => (u.wake = resolve));
      if (u.stopped) return this.done(cmd, -1, `interrupted: ${u.stopped}`, true);
      this.done(cmd, 0);
    } catch (err) {
      this.done(cmd, 1, (err as Error).message);
    } finally {
      this.uploads.delete(cmd);
      await handle?.close();
    }
  }

  private beginDownload(cmd: string, path: string, r: TransferRequest): void {
    // Registered at once: the first block may come before the file is open, and waits for it.
    const d = {
      path,
      mode: r.mode ?? null,
      maxsize: r.maxsize ?? null,
      written: 0,
      truncated: false,
    } as Download;
    d.chain = (async () => {
      try {
        d.file = await this.openForDownload(path);
      } catch {
        this.downloads.delete(cmd);
        this.done(cmd, 1, `Cannot open file '${path}' for download`);
      }
    })();
    this.downloads.set(cmd, d);
  }

  /** A block of a download. */
  data(m: { cmd: string; seq: number; data: string; eof?: boolean }): void {
    const d = this.downloads.get(m.cmd);
    if (!d) return;
    d.chain = d.chain.then(async () => {
      if (!this.started.has(m.cmd) || !this.downloads.has(m.cmd)) return;
      let block = Buffer.from(m.data, 'base64');
      const room = d.maxsize == null ? Infinity : d.maxsize - d.written;
      if (block.length > room) {
        block = block.subarray(0, room);
        d.truncated = true;
      }
      await d.file.write(block);
      d.written += block.length;
      if (d.truncated)
        return this.finishDownload(m.cmd, d, 1, `Maximum filesize reached, truncating file '${d.path}'`);
      if (m.eof) return this.finishDownload(m.cmd, d, 0);
      this.send({ type: 'ack', cmd: m.cmd, seq: m.seq });
    });
    d.chain.catch((err) => this.finishDownload(m.cmd, d, 1, (err as Error).message));
  }

  private async finishDownload(cmd: string, d: Download, rc: number, message?: string): Promise<void> {
    this.downloads.delete(cmd);
    await d.file.close().catch(() => {});
    if (rc === 0 && d.mode !== null) await chmod(d.path, d.mode);
    this.done(cmd, rc, message);
  }

  /** An upload's block is stored by the master. */
  ack(cmd: string, seq: number): void {
    const u = this.uploads.get(cmd);
    const bytes = u?.inFlight.get(seq);
    if (!u || bytes === undefined) return;
    u.inFlight.delete(seq);
    u.bytes -= bytes;
    if (u.bytes <= WINDOW / 2 || u.bytes === 0) u.wake?.();
  }

  interrupt(cmd: string, reason: string): void {
    const u = this.uploads.get(cmd);
    if (u) {
      u.stopped = reason;
      u.stop();
      u.wake?.();
      // Said at once: the upload may be waiting to open or read its file, and sends no more.
      this.done(cmd, -1, `interrupted: ${reason}`, true);
      return;
    }
    const d = this.downloads.get(cmd);
    if (d) void d.chain.then(() => this.finishDownload(cmd, d, -1, `interrupted: ${reason}`));
  }

  /** The master is gone, or the worker stops: stop everything. */
  lost(reason = 'lost the master'): void {
    for (const cmd of [...this.uploads.keys(), ...this.downloads.keys()]) this.interrupt(cmd, reason);
  }
}

/** A tar's output, failing if tar itself fails (a missing directory). */
async function* withExit(
  out: Readable,
  exited: Promise<number>,
  stderr: () => string,
): AsyncIterable<Buffer> {
  for await (const chunk of out) yield chunk as Buffer;
  const code = await exited;
  if (code !== 0) throw new Error(`Cannot read directory for upload: ${stderr().trim()}`);
}
