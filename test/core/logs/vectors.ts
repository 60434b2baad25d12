// Loads the vectors that vectors/make-vectors.py wrote (see its docstring for the format).

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type CompressionCode, compressionCode } from '../../../services/core/logs/codecs.js';
import type { LogType } from '../../../services/core/logs/types.js';

const here = new URL('./vectors/', import.meta.url);

/** Either [text, count] pairs (text holding {i} repeats numbered) or base64 bytes. */
export type InputSpec = { parts: [string, number][] } | { b64: string };

/** A value over 2 kB is recorded by its SHA-256, length and ends. */
export type Recorded<T> = T | { sha256: string; length: number; head: string; tail: string };

export interface CodecVectors {
  libraries: Record<string, string>;
  cases: { name: string; input: InputSpec; encodings: { code: number; variant: string; b64: string }[] }[];
  bombs: { code: number; decoded_size: number; b64: string }[];
}

export interface VectorRow {
  first_line: number;
  last_line: number;
  compressed: number;
  b64: string;
}

export interface BuildbotScenario {
  name: string;
  type: LogType;
  method: string;
  appends: { parts: [string, number][] }[];
  rows: VectorRow[];
  num_lines: number;
  compress?: { force: boolean };
  compressed_rows?: (Omit<VectorRow, 'b64'> & { decoded: Recorded<{ b64: string }> })[];
  reads: { first: number; last: number; text: Recorded<string> }[];
  contents: { offset: number | null; limit: number | null; content: Recorded<string> | null }[];
  raw: Recorded<string>;
}

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, here), 'utf8')) as T;
}

export const codecVectors = (): CodecVectors => load('codecs.json');
export const buildbotVectors = (): { buildbot: string; scenarios: BuildbotScenario[] } =>
  load('buildbot.json');

/** bz2 and lz4: Buildbot wrote the scenario's rows with them; Flotilla only reads them. */
export const readOnlyMethod = (sc: BuildbotScenario): boolean => sc.method === 'bz2' || sc.method === 'lz4';

/**
 * The code a Flotilla master writes where Buildbot wrote the scenario: the same one, or
 * gz (its default) for a method it only reads.
 */
export const writtenCode = (sc: BuildbotScenario): CompressionCode =>
  readOnlyMethod(sc) ? 1 : compressionCode(sc.method);

export function partsText(parts: [string, number][]): string {
  let out = '';
  for (const [text, count] of parts) {
    if (!text.includes('{i}')) out += text.repeat(count);
    else for (let i = 0; i < count; i++) out += text.replaceAll('{i}', String(i));
  }
  return out;
}

export function inputBytes(spec: InputSpec): Uint8Array {
  return 'parts' in spec ? new TextEncoder().encode(partsText(spec.parts)) : Buffer.from(spec.b64, 'base64');
}

export function rowFromVector(row: VectorRow) {
  return {
    first_line: row.first_line,
    last_line: row.last_line,
    compressed: row.compressed,
    content: new Uint8Array(Buffer.from(row.b64, 'base64')),
  };
}

/**
 * What a recorded value says about `actual`, in a form that compares with toEqual:
 * small values as they are, large ones as their digest (so a mismatch still shows
 * length and ends).
 */
export function asRecorded(actual: string | Uint8Array, recorded: Recorded<unknown>): unknown {
  const bytes = typeof actual === 'string' ? Buffer.from(actual, 'utf8') : Buffer.from(actual);
  if (recorded !== null && typeof recorded === 'object' && 'sha256' in recorded) {
    return {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      length: bytes.length,
      head: bytes.subarray(0, 200).toString('utf8'),
      tail: bytes.subarray(bytes.length - 200).toString('utf8'),
    };
  }
  return typeof actual === 'string' ? actual : { b64: bytes.toString('base64') };
}
