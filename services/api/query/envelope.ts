// Rows -> the body Buildbot answers: {"<plural>": [...], "meta": {...}}, as compact JSON for
// clients that accept application/json and indented text otherwise.
import { pyDumps } from './pyjson.js';

export interface Envelope {
  plural: string;
  rows: unknown[];
  /** Collections carry the total; single entities an empty meta. */
  total: number | null;
}

export interface Rendered {
  body: string;
  contentType: string;
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

export function renderEnvelope(e: Envelope, accept: string | undefined): Rendered {
  return renderJson({ [e.plural]: e.rows, meta: e.total === null ? {} : { total: e.total } }, accept);
}
