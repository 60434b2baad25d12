// Finished logs' raw downloads kept on the API pod's local disk, so that the next download
// of the same log is a file sent from the page cache instead of every chunk fetched from
// PostgreSQL and decoded again. PostgreSQL is the one part of the cluster that does not
// scale out; API pods do, and a build's failure log is downloaded again and again.
//
// A finished log never changes: its id, its line count and its type name its body, as the
// raw download's ETag already says. (Buildbot's chunk janitor sets a log's type to 'd'
// before it deletes the chunks, and compression keeps every line, so both are seen.) Only a
// whole body is kept: each download of a log that has none kept, and that nobody is keeping
// yet, writes what it streams to a temporary file, renamed into place once the last chunk
// has gone out; a download cut short leaves nothing. Memory stays constant: a download that
// is being copied waits for the disk when the disk falls behind, as it waits for its client.
//
// Each process has a private folder of its own (0700, made with a random name) under `dir`,
// so that API processes side by side, or other users on the host, never share or touch its
// files; it removes that folder when it closes, and never anything else: a folder left by a
// process that died stays until someone removes it (in Kubernetes, `dir` is the pod's own
// emptyDir). The default `dir` is a folder of this user's in the system's temporary folder,
// used only while it is a real directory that this user owns and no one else may write to
// (docs/security.md). The least recently used bodies go first once `maxBytes` is reached.
//
// Measured (load/results/raw-logs.md): the 1,000,000-line log (40 MB) is downloaded 17
// times a second from the database and 96 times from the kept file at one connection (17 and
// 104 at eight); Buildbot 3.7 serves it 2.5 times a second.
import { createWriteStream, type WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { chmod, lstat, mkdir, mkdtemp, open, rename, rm, unlink } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What names a finished log's body. */
export interface RawLogKey {
  id: number;
  numLines: number;
  type: string;
}

export interface RawLogCacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
}

const PREFIX = 'raw-';
// A kept body is sent in reads of 1 MiB through two buffers taken from a small pool: one is
// filled from the file while the other is being written to the socket, and nothing is
// allocated per read. With a file stream of 64 KiB reads (Node's default) the 40 MB log went
// 12 times a second at one connection, through the pooled buffers 96 (load/results/raw-logs.md);
// with 1 MiB reads into fresh buffers the garbage collector took a quarter of the process.
const READ_BYTES = 1024 * 1024;
const POOLED = 16;
const pool: Buffer[] = [];
const take = () => pool.pop() ?? Buffer.allocUnsafeSlow(READ_BYTES);
const give = (b: Buffer) => {
  if (pool.length < POOLED) pool.push(b);
};

/** A kept body, opened: eviction can take its name, never its content. */
export interface KeptBody {
  file: FileHandle;
  bytes: number;
}

/** A write handed to the socket; `gone` settles it if the connection closes first. */
function write(res: ServerResponse, piece: Buffer, gone: Promise<never>): Promise<void> {
  const written = new Promise<void>((resolve, reject) => {
    if (res.destroyed) return reject(new Error('the client went away'));
    res.write(piece, (err) => (err ? reject(err) : resolve()));
  });
  return Promise.race([written, gone]);
}

/**
 * Send a kept body as the rest of `res` (its status and headers already written) and close
 * the file, whatever happens; a client that goes away ends it early.
 */
export async function sendKept(res: ServerResponse, kept: KeptBody): Promise<void> {
  const buffers = [take(), take()];
  // Before end() the response closes only when its connection does.
  const gone = new Promise<never>((_, reject) => res.once('close', () => reject(new Error('closed'))));
  gone.catch(() => {});
  // A write's failure is kept here at once (its promise is awaited only after the next read).
  let failure: unknown = null;
  let inFlight: Promise<void> | null = null;
  try {
    let pos = 0;
    for (let i = 0; pos < kept.bytes; i ^= 1) {
      // This buffer's last write was awaited before the previous one was issued.
      const buf = buffers[i]!;
      const { bytesRead } = await kept.file.read(buf, 0, Math.min(READ_BYTES, kept.bytes - pos), pos);
      if (bytesRead === 0) throw new Error('a kept body is shorter than it was');
      pos += bytesRead;
      if (inFlight) await inFlight;
      if (failure) throw failure;
      inFlight = write(res, buf.subarray(0, bytesRead), gone).catch((err: unknown) => {
        failure = err;
      });
    }
    if (inFlight) await inFlight;
    if (failure) throw failure;
    res.end();
  } catch {
    res.destroy();
  } finally {
    // A write still in flight holds its buffer: let it finish (or fail) before reuse.
    await inFlight;
    for (const b of buffers) give(b);
    await kept.file.close().catch(() => {});
  }
}

/** This user's own folder in the system's temporary folder (checked by open: ownDir). */
export const defaultRawLogDir = () => join(tmpdir(), `flotilla-raw-logs-${process.getuid?.() ?? 'user'}`);

const nameOf = (k: RawLogKey) => `${k.id}-${k.numLines}-${k.type}`;

/**
 * `dir` is usable: a directory, not a link to one elsewhere; and, when `ownOnly` (the
 * default folder in a shared temporary folder), this user's and writable by no one else.
 */
async function checkRoot(dir: string, ownOnly: boolean): Promise<void> {
  const st = await lstat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a link is not followed)`);
  if (ownOnly && (st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0)) {
    throw new Error(`${dir} is not this user's own folder`);
  }
}

export class RawLogCache {
  /** Kept bodies by name, least recently used first (a Map keeps insertion order). */
  private readonly kept = new Map<string, { id: number; path: string; bytes: number }>();
  private readonly filling = new Set<string>();
  private bytes = 0;
  private readonly counts = { hits: 0, misses: 0 };

  private constructor(
    private readonly folder: string,
    private readonly maxBytes: number,
  ) {}

  /** `ownOnly`: `dir` must belong to this user alone (the default folder under /tmp). */
  static async open(dir: string, maxBytes: number, ownOnly = false): Promise<RawLogCache> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await checkRoot(dir, ownOnly);
    // A random name, made exclusively, then only ours: no one can have made it first.
    const folder = await mkdtemp(join(dir, PREFIX));
    await chmod(folder, 0o700);
    return new RawLogCache(folder, maxBytes);
  }

  /** The kept body of this log, opened (so eviction cannot take it away mid-send), or null. */
  async get(key: RawLogKey): Promise<KeptBody | null> {
    const name = nameOf(key);
    const entry = this.kept.get(name);
    if (!entry) {
      this.counts.misses++;
      return null;
    }
    try {
      const file = await open(entry.path, 'r');
      this.kept.delete(name);
      this.kept.set(name, entry);
      this.counts.hits++;
      return { file, bytes: entry.bytes };
    } catch {
      this.drop(name);
      this.counts.misses++;
      return null;
    }
  }

  /** A copy of the body about to be streamed, or null when one is already being made. */
  begin(key: RawLogKey): RawLogCopy | null {
    const name = nameOf(key);
    if (this.filling.has(name) || this.kept.has(name)) return null;
    this.filling.add(name);
    const path = join(this.folder, name);
    // One copy of a name at a time (`filling`), so the temporary name is free.
    const tmp = `${path}.part`;
    return new RawLogCopy(tmp, this.maxBytes, (ok, bytes) => this.settle(key.id, name, path, tmp, ok, bytes));
  }

  private async settle(id: number, name: string, path: string, tmp: string, ok: boolean, bytes: number) {
    try {
      // An empty body costs nothing to send from the database either; a rename fails once
      // the folder is gone (the API is closing).
      const keep =
        ok &&
        bytes > 0 &&
        (await rename(tmp, path).then(
          () => true,
          () => false,
        ));
      if (!keep) {
        await unlink(tmp).catch(() => {});
        return;
      }
      // Older bodies of the same log (fewer lines, another type) are never asked for again.
      for (const [other, entry] of this.kept) if (entry.id === id) this.drop(other);
      this.kept.set(name, { id, path, bytes });
      this.bytes += bytes;
      for (const [old] of this.kept) {
        if (this.bytes <= this.maxBytes) break;
        this.drop(old);
      }
    } finally {
      this.filling.delete(name);
    }
  }

  private drop(name: string): void {
    const entry = this.kept.get(name);
    if (!entry) return;
    this.kept.delete(name);
    this.bytes -= entry.bytes;
    // A download reading it keeps its open file; the name goes now.
    void unlink(entry.path).catch(() => {});
  }

  stats(): RawLogCacheStats {
    return { entries: this.kept.size, bytes: this.bytes, ...this.counts };
  }

  async close(): Promise<void> {
    this.kept.clear();
    this.bytes = 0;
    await rm(this.folder, { recursive: true, force: true });
  }
}

/** One body being written while it is downloaded. */
export class RawLogCopy {
  private readonly out: WriteStream;
  private bytes = 0;
  private failed = false;
  private settled = false;

  constructor(
    tmp: string,
    /** A body larger than the whole cache is not worth writing. */
    private readonly maxBytes: number,
    private readonly done: (ok: boolean, bytes: number) => Promise<void>,
  ) {
    this.out = createWriteStream(tmp);
    this.out.on('error', () => {
      this.failed = true;
    });
  }

  /** Copy a piece; a promise when the disk wants the download to wait for it to catch up. */
  write(piece: Buffer): Promise<void> | undefined {
    if (this.failed || this.settled) return undefined;
    if (this.bytes + piece.length > this.maxBytes) {
      this.failed = true;
      return undefined;
    }
    this.bytes += piece.length;
    if (this.out.write(piece)) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.out.off('drain', done).off('close', done);
        resolve();
      };
      this.out.on('drain', done).on('close', done);
    });
  }

  /** The whole body went out: keep it (unless the disk failed or the body outgrew the cache). */
  async commit(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.closed(() => this.out.end());
    await this.done(!this.failed, this.bytes);
  }

  /** The download was cut short: keep nothing. */
  abort(): void {
    if (this.settled) return;
    this.settled = true;
    // Only once the file is closed can its name go for good.
    void this.closed(() => this.out.destroy()).then(() => this.done(false, this.bytes));
  }

  /** Do `act` and wait until the file is closed ('close' follows both finish and error). */
  private closed(act: () => void): Promise<void> {
    if (this.out.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.out.once('close', () => resolve());
      act();
    });
  }
}
