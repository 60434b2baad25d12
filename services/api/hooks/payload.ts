// Reading a forge's JSON payload: its headers and the fields a dialect needs, each a 400
// naming the field when it is missing or of the wrong type (Buildbot's KeyError there is a
// 500). Shared by the GitHub, GitLab and Bitbucket dialects.
import { hookInvalid } from '../errors/catalogue.js';

export type Json = Record<string, unknown>;
export type Headers = Record<string, string | string[] | undefined>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const header = (headers: Headers, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** What a payload's field at `path` (dotted) holds, undefined where the path breaks. */
export function valueAt(o: Json, path: string): unknown {
  return path.split('.').reduce<unknown>((at, k) => (isObject(at) ? at[k] : undefined), o);
}

/** A field of a `kind` payload (at `where` in it) that must hold a string. */
export function field(o: Json, path: string, where = '', kind = 'push'): string {
  const v = valueAt(o, path);
  if (typeof v !== 'string') throw hookInvalid(`malformed ${kind} payload: ${where}${path} is not a string`);
  return v;
}

/** The seconds since the epoch of a payload's date (ISO 8601, as every forge sends them). */
export function seconds(o: Json, path: string, where = '', kind = 'push'): number {
  const stamp = Date.parse(field(o, path, where, kind));
  if (!Number.isFinite(stamp)) throw hookInvalid(`malformed ${kind} payload: ${where}${path} is not a date`);
  return Math.floor(stamp / 1000);
}

/** A commit's files, added then modified then removed (GitHub's and GitLab's push commits). */
export function fileList(commit: Json, i: number): string[] {
  const files: string[] = [];
  for (const kind of ['added', 'modified', 'removed']) {
    const list = commit[kind] ?? [];
    if (!Array.isArray(list) || list.some((f) => typeof f !== 'string'))
      throw hookInvalid(`malformed push payload: commits[${i}].${kind} is not a list of file names`);
    files.push(...list);
  }
  return files;
}
