// Rows -> the body Buildbot answers: {"<plural>": [...], "meta": {...}}, as compact JSON for
// clients that accept application/json and indented text otherwise.
import type { Rendered } from '../reply/etag.js';
import { pyDumps, pyRows, pyString } from '../reply/pyjson.js';

export interface Envelope {
  plural: string;
  /** Entities; arrays of their values, named by `names`, when `names` is given. */
  rows: unknown[];
  names?: readonly string[];
  /**
   * The entities already written as compact JSON (a list), when PostgreSQL wrote them (run.ts,
   * the text form); `rows` is then empty.
   */
  json?: string;
  /** Collections carry the total; single entities an empty meta. */
  total: number | null;
}

export function wantsJson(accept: string | undefined): boolean {
  // Buildbot looks for the substring, case-sensitively; so do we.
  return (accept ?? '').includes('application/json');
}

export function renderJson(value: unknown, accept: string | undefined): Rendered {
  return wantsJson(accept)
    ? { body: pyDumps(value), contentType: 'application/json; charset=utf-8' }
    : { body: pyDumps(value, 2), contentType: 'text/plain; charset=utf-8' };
}

/** The envelope's entities as objects, whichever way its rows came. */
export function entities(e: Envelope): Record<string, unknown>[] {
  const names = e.names;
  if (!names) return e.rows as Record<string, unknown>[];
  return (e.rows as unknown[][]).map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
}

export function renderEnvelope(e: Envelope, accept: string | undefined): Rendered {
  const meta = e.total === null ? {} : { total: e.total };
  const names = e.names;
  if (e.json !== undefined && !wantsJson(accept)) throw new Error('a page read as text is compact JSON only');
  if (e.json === undefined && (!names || !wantsJson(accept)))
    return renderJson({ [e.plural]: entities(e), meta }, accept);
  // The two keys in code point order, as every object Buildbot writes.
  const list = `${pyString(e.plural)}:${e.json ?? pyRows(e.rows as unknown[][], names!)}`;
  const m = `"meta":${pyDumps(meta)}`;
  const body = e.plural < 'meta' ? `{${list},${m}}` : `{${m},${list}}`;
  return { body, contentType: 'application/json; charset=utf-8' };
}
