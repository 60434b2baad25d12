// The buildbot-worker commands besides shell, as Buildbot 3.7's steps use them
// (buildbot_worker/commands/fs.py and transfer.py). Paths are absolute on the worker
// (conn.path() makes them). A transfer is paced by the worker: it sends the next block only
// once the master answered the last one, so `write` and `read` are never called twice at once.
import type { CommandResult, MsgpackWorkerConnection } from './connection.js';

export function mkdir(conn: MsgpackWorkerConnection, paths: string[]): Promise<CommandResult> {
  return conn.command('mkdir', { paths });
}

export function rmdir(conn: MsgpackWorkerConnection, paths: string[]): Promise<CommandResult> {
  return conn.command('rmdir', { paths, timeout: 120 });
}

export function rmfile(conn: MsgpackWorkerConnection, path: string): Promise<CommandResult> {
  return conn.command('rmfile', { path });
}

export function cpdir(conn: MsgpackWorkerConnection, from: string, to: string): Promise<CommandResult> {
  return conn.command('cpdir', { from_path: from, to_path: to, timeout: 120 });
}

/** os.stat's first ten fields (mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime), or null. */
export async function stat(conn: MsgpackWorkerConnection, path: string): Promise<number[] | null> {
  const r = await conn.command('stat', { path });
  const s = r.values.get('stat');
  return r.rc === 0 && Array.isArray(s) ? (s as number[]) : null;
}

export async function glob(conn: MsgpackWorkerConnection, pattern: string): Promise<string[] | null> {
  const r = await conn.command('glob', { path: pattern, logEnviron: false });
  const f = r.values.get('files');
  return r.rc === 0 && Array.isArray(f) ? (f as string[]) : null;
}

export async function listdir(conn: MsgpackWorkerConnection, path: string): Promise<string[] | null> {
  const r = await conn.command('listdir', { path });
  const f = r.values.get('files');
  return r.rc === 0 && Array.isArray(f) ? (f as string[]) : null;
}

/** A file from the worker, block by block into `write` (each block waits for the one before). */
export function upload(
  conn: MsgpackWorkerConnection,
  path: string,
  write: (data: Uint8Array) => Promise<void>,
  opts: { maxsize?: number; blocksize?: number; keepstamp?: boolean; close?: () => Promise<void> } = {},
): Promise<CommandResult> {
  return conn.command(
    'upload_file',
    {
      path,
      maxsize: opts.maxsize ?? null,
      blocksize: opts.blocksize ?? 256 * 1024,
      keepstamp: !!opts.keepstamp,
    },
    { write, close: opts.close ?? (async () => {}), utime: async () => {} },
  );
}

/** A directory from the worker as a tar archive (compress: null, 'gz' or 'bz2'). */
export function uploadDirectory(
  conn: MsgpackWorkerConnection,
  path: string,
  write: (data: Uint8Array) => Promise<void>,
  opts: {
    maxsize?: number;
    blocksize?: number;
    compress?: 'gz' | 'bz2' | null;
    unpack?: () => Promise<void>;
  } = {},
): Promise<CommandResult> {
  return conn.command(
    'upload_directory',
    {
      path,
      maxsize: opts.maxsize ?? null,
      blocksize: opts.blocksize ?? 256 * 1024,
      compress: opts.compress ?? null,
    },
    { write, unpack: opts.unpack ?? (async () => {}) },
  );
}

/** A file to the worker: `read(n)` gives up to n bytes, an empty array at the end. */
export function download(
  conn: MsgpackWorkerConnection,
  path: string,
  read: (length: number) => Promise<Uint8Array>,
  opts: { mode?: number | null; maxsize?: number; blocksize?: number } = {},
): Promise<CommandResult> {
  return conn.command(
    'download_file',
    {
      path,
      maxsize: opts.maxsize ?? null,
      blocksize: opts.blocksize ?? 256 * 1024,
      mode: opts.mode ?? null,
    },
    { read, close: async () => {} },
  );
}
