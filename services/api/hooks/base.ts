// The base change hook: one change from the request's fields.
//
// Buildbot facts (buildbot/www/hooks/base.py): fields author (or `who` when author is empty),
// committer, comments, revision, when_timestamp (or `when`; a number of seconds), branch,
// category, revlink, repository and project ('' when absent or empty), codebase, files (a
// JSON list) and properties (a JSON object); the change has no `src`, so its author is not
// linked to a user.
// Where we differ: a JSON object body (our addition) gives the same fields, files and
// properties then also as a list and an object; a missing author, files that are not a list
// of strings, properties that are not an object and a time that is not a number are 400
// (Buildbot answers some of these 500, or stores nonsense).
import type { NewChange } from '../../core/data/index.js';
import { INT32_MAX } from '../../core/identifiers.js';
import { hookInvalid } from '../errors/catalogue.js';
import { parseJson } from './body.js';

function str(fields: ReadonlyMap<string, unknown>, name: string): string | undefined {
  const v = fields.get(name);
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw hookInvalid(`${name} must be a string`);
}

/** A field that holds JSON in a form (a string), or the value itself in a JSON body. */
function structured(fields: ReadonlyMap<string, unknown>, name: string): unknown {
  const v = fields.get(name);
  return typeof v === 'string' ? parseJson(v, name) : v;
}

function files(fields: ReadonlyMap<string, unknown>): string[] {
  const v = structured(fields, 'files');
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((f) => typeof f !== 'string'))
    throw hookInvalid('files must be a JSON list of file names');
  return v;
}

function properties(fields: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const v = structured(fields, 'properties');
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw hookInvalid('properties must be a JSON object');
  return v as Record<string, unknown>;
}

function when(fields: ReadonlyMap<string, unknown>): number | null {
  const v = fields.get('when_timestamp') ?? fields.get('when');
  if (v === undefined || v === null) return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || n < 0 || Math.trunc(n) > INT32_MAX)
    throw hookInvalid(`when_timestamp must be a number of seconds since the epoch, not ${JSON.stringify(v)}`);
  return Math.trunc(n);
}

export function baseChange(fields: ReadonlyMap<string, unknown>): NewChange {
  const author = str(fields, 'author') || str(fields, 'who');
  if (!author) throw hookInvalid('author is required');
  return {
    author,
    committer: str(fields, 'committer') ?? null,
    files: files(fields),
    comments: str(fields, 'comments') ?? '',
    revision: str(fields, 'revision') ?? null,
    when_timestamp: when(fields),
    branch: str(fields, 'branch') ?? null,
    category: str(fields, 'category') ?? null,
    revlink: str(fields, 'revlink') ?? '',
    properties: properties(fields),
    repository: str(fields, 'repository') || '',
    project: str(fields, 'project') || '',
    codebase: str(fields, 'codebase') ?? '',
  };
}
