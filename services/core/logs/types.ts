// The shapes shared by the log modules, named after Buildbot's columns so that rows from
// `SELECT first_line, last_line, content, compressed FROM logchunks` pass straight in.

/** One `logchunks` row of a log: lines first_line..last_line (inclusive), stored bytes. */
export interface LogChunkRow {
  first_line: number;
  last_line: number;
  /** Stored bytes: whole lines joined by \n, no final newline, compressed per `compressed`. */
  content: Uint8Array;
  /** Compression code (codecs.ts). */
  compressed: number;
}

/** Inclusive line numbers, 0-based. */
export interface LineRange {
  first_line: number;
  last_line: number;
}

/** `logs.type`: s stdio (a stream character starts each line), t text, h html, d deleted. */
export type LogType = 's' | 't' | 'h' | 'd';
