// How much one upload may store, and the master's own count of what it stores (issue 28).
// The worker is told the limit as its maxsize, as Buildbot's master tells it; but a worker
// runs other people's code and may send more, so the master counts every block as it arrives
// (both protocols hand each block to the step's `write`, one at a time) and stops at the
// limit, as Buildbot's FileWriter cuts an upload at maxsize. Past it the step fails at once
// with the reason in its log, the worker is told to stop (an interrupt), every block it still
// sends is refused unstored, and transfer.ts drops the artifact: nothing partial is kept.
// The master does not wait for a worker that goes on sending.
//
// The limit: the step's maxsize, else artifacts.default_maxsize; and never more than what
// artifacts.build_quota leaves the build, its other artifacts counted as the upload starts
// (a build runs its steps one after another, so nothing else writes to it meanwhile).
import type { MasterConfig } from '../../../core/config/master-config.js';
import { artifactBytesOfBuild } from '../../../core/data/index.js';
import type { Queryable } from '../../../core/db/pool.js';
import type { TransferEnd } from '../../workers/connection.js';

export interface UploadLimit {
  /** The most bytes the upload may store. */
  bytes: number;
  /** Which setting makes it so, for the step's log. */
  why: string;
}

/** One upload's limit, from its step's maxsize (null: none set), the defaults and the build's quota. */
export async function uploadLimit(
  q: Queryable,
  limits: MasterConfig['artifacts'],
  buildid: number,
  maxsize: number | null | undefined,
): Promise<UploadLimit> {
  const own =
    maxsize != null
      ? { bytes: maxsize, why: `the step's maxsize is ${maxsize} bytes` }
      : {
          bytes: limits.default_maxsize,
          why: `the step sets no maxsize, and artifacts.default_maxsize is ${limits.default_maxsize} bytes`,
        };
  const used = await artifactBytesOfBuild(q, buildid);
  const left = Math.max(0, limits.build_quota - used);
  return left < own.bytes
    ? {
        bytes: left,
        why: `the build's artifacts may take ${limits.build_quota} bytes (artifacts.build_quota), and ${used} are taken`,
      }
    : own;
}

/** A block the master refused: the upload went past its limit. */
export class UploadTooLarge extends Error {
  override name = 'UploadTooLarge';
}

type Write = (block: Uint8Array) => Promise<void>;

/**
 * How a metered upload ended: the worker's end (`full` when it stopped at the limit, as an
 * honest worker does past its maxsize), or `over`, the log's text, once the master stopped it.
 */
export type MeteredEnd = { end: TransferEnd; full: boolean } | { over: string };

/**
 * Run one upload, the master counting its blocks: `start` begins it with the limit as the
 * worker's maxsize, a `write` that counts each block before `store` keeps it, and a signal
 * aborted when `signal` is, or at the limit (which interrupts the transfer on the worker).
 */
export async function meteredUpload(
  limit: UploadLimit,
  store: Write,
  signal: AbortSignal,
  start: (maxsize: number, write: Write, signal: AbortSignal) => Promise<TransferEnd>,
): Promise<MeteredEnd> {
  const text = `Upload stopped by the master past ${limit.bytes} bytes: ${limit.why}. Nothing of it was kept.`;
  const cut = new AbortController();
  const follow = () => cut.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  let total = 0;
  let over = false;
  let stopped!: () => void;
  const past = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const write = async (block: Uint8Array) => {
    if (!over && total + block.length > limit.bytes) {
      over = true;
      cut.abort(text);
      stopped();
    }
    if (over) throw new UploadTooLarge(text);
    total += block.length;
    await store(block);
  };
  try {
    const ended = start(limit.bytes, write, cut.signal).then((end) => ({
      end,
      full: total >= limit.bytes,
    }));
    // Past the limit the race is decided without the transfer's end: a failure it ends in
    // later has nobody left to hear it, and must not become an unhandled rejection.
    ended.catch(() => {});
    const first = await Promise.race([ended, past]);
    return over || !first ? { over: text } : first;
  } finally {
    signal.removeEventListener('abort', follow);
  }
}

/** The log's words when an honest worker stopped at the limit itself (it says only "maximum filesize"). */
export const reachedText = (limit: UploadLimit) =>
  `The upload reached its limit of ${limit.bytes} bytes: ${limit.why}. Nothing of it was kept.`;
