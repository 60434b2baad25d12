// File transfers with a buildbot-worker (buildbot_worker/commands/transfer.py): the worker
// sends or asks for one block at a time and waits for the master's answer to each, so the
// handlers (./command-start.ts) are never called twice at once. An abort of `signal`
// interrupts the transfer on the worker.
import { commandText } from '../command-text.js';
import type { TransferEnd, TransferSpec } from '../connection.js';
import type { CommandHandlers, CommandStarter } from './command-start.js';

/** A transfer's blocks when the step names no size (Buildbot's transfer steps' default). */
const BLOCK = 256 * 1024;

/** The arguments every transfer command takes: the path on the worker, the limit, the block size. */
const sizes = (conn: CommandStarter, spec: TransferSpec) => ({
  path: conn.path(spec.path),
  maxsize: spec.maxsize ?? null,
  blocksize: spec.blocksize ?? BLOCK,
});

/** A file from the worker (buildbot-worker's upload_file), block by block. */
export function upload(
  conn: CommandStarter,
  spec: TransferSpec,
  write: (b: Uint8Array) => Promise<void>,
  signal?: AbortSignal,
): Promise<TransferEnd> {
  const args = { ...sizes(conn, spec), keepstamp: false };
  return moveFile(conn, 'upload_file', args, { write, close: async () => {}, utime: async () => {} }, signal);
}

/** A directory from the worker as a tar archive (upload_directory). */
export function uploadDirectory(
  conn: CommandStarter,
  spec: TransferSpec,
  write: (b: Uint8Array) => Promise<void>,
  signal?: AbortSignal,
): Promise<TransferEnd> {
  const args = { ...sizes(conn, spec), compress: spec.compress ?? null };
  return moveFile(conn, 'upload_directory', args, { write, unpack: async () => {} }, signal);
}

/** A file to the worker (download_file): its parent directories made, its mode set. */
export function download(
  conn: CommandStarter,
  spec: TransferSpec,
  read: (n: number) => Promise<Uint8Array>,
  signal?: AbortSignal,
): Promise<TransferEnd> {
  const args = { ...sizes(conn, spec), mode: spec.mode ?? null };
  return moveFile(conn, 'download_file', args, { read, close: async () => {} }, signal);
}

async function moveFile(
  conn: CommandStarter,
  name: string,
  args: Record<string, unknown>,
  handlers: CommandHandlers,
  signal?: AbortSignal,
): Promise<TransferEnd> {
  const text = commandText();
  const header = commandText();
  const { id, done } = conn.start(name, args, {
    ...handlers,
    output: async (stream, t) => {
      if (stream === 'h') header.add(t);
      else if (stream === 'e') text.add(t);
    },
  });
  const interrupt = () => conn.interruptCommand(id, String(signal?.reason));
  if (signal?.aborted) interrupt();
  else signal?.addEventListener('abort', interrupt, { once: true });
  const end = await done;
  signal?.removeEventListener('abort', interrupt);
  if ('lost' in end) return end;
  if (end.failure !== null) return { rc: -1, text: end.failure };
  const rc = end.values.get('rc');
  const said = header.text();
  return { rc: typeof rc === 'number' ? rc : -1, text: text.text(), ...(said ? { header: said } : {}) };
}
