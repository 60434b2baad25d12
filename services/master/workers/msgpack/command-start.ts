// What starting a buildbot-worker command gives. The connection (./connection.ts) owns the
// commands and routes the worker's updates to their handlers; ./shell.ts and ./transfers.ts
// each drive one kind of command through this interface, so that neither they nor the
// connection import each other (test/structure.test.ts refuses circles).
import type { OutputSink } from '../connection.js';

/** What a command's updates and transfer operations go to. */
export interface CommandHandlers {
  output?: OutputSink;
  write?: (data: Uint8Array) => Promise<void>;
  close?: () => Promise<void>;
  utime?: (accessTime: number, modifiedTime: number) => Promise<void>;
  unpack?: () => Promise<void>;
  read?: (length: number) => Promise<Uint8Array>;
}

/** How a command ended: the values its updates carried and the worker's failure, or the link lost. */
export type RawEnd =
  | { values: Map<string, unknown>; failure: string | null }
  | { lost: true; reason: string };

export interface CommandStarter {
  /** Starts a worker command; its end arrives with `complete` (or the connection's loss). */
  start(
    name: string,
    args: Record<string, unknown>,
    handlers: CommandHandlers,
  ): { id: string; done: Promise<RawEnd> };
  /** Asks the worker to interrupt a command, if it is still running. */
  interruptCommand(id: string, why: string): void;
  /** An absolute path on the worker, from parts relative to its base directory. */
  path(...parts: string[]): string;
}
