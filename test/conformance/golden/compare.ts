// Does an answer match what a golden case expects (test/fixtures/buildbot-3.7/cases.json)?
// The rules are the cases' own, as they were recorded (test/fixtures/buildbot-3.7/README.md):
// - the status must be equal; the content type on its media type alone (lower case, no
//   charset); each header the case names (content-disposition of raw logs) exactly;
// - a body the case holds as text (raw logs, HEAD, plain-text errors) must be the same text;
//   one it holds as JSON must parse and deep-equal it, key order ignored and list order kept,
//   except that
//   - in an `unordered` case (the request asked no order) the envelope's list is a multiset;
//   - a worker's `configured_on` and `connected_to` are multisets wherever they appear:
//     Buildbot gives them no order, and a restarted Buildbot another one;
//   - `last_active` (the master's heartbeat) and the paths the case lists in `ignore`
//     (`error.message`) must be there, but their values are not compared (an ignored path's
//     JSON type is);
// - a `shape` case (new ids of forced builds, errors whose message is free) compares JSON
//   types only: the same keys, the same list lengths; its text body is not compared.
// - the fields Buildbot 4.3 added to 3.7's entities (../buildbot-4.3.ts) may be in an answer
//   whose case does not name them: a 3.7 case says nothing about them, a 4.3 case names them;
// Pure: the answer is given, nothing is asked here (replay.ts asks). The first difference
// found is returned as a path under the body with what was expected and what came, so a
// failing case says where to look.
import type { GoldenCase } from '../../helpers/buildbot-recorded.js';
import { ADDED_FIELDS } from '../buildbot-4.3.js';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const HEARTBEAT = 'last_active';
const UNORDERED_KEYS = new Set(['configured_on', 'connected_to']);

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

function jsonType(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as JsonType;
}

/** A value as JSON text, cut to `max` characters. */
function brief(v: unknown, max = 100): string {
  const text = v === undefined ? 'undefined' : JSON.stringify(v);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

const mediaType = (contentType: string | null): string =>
  contentType ? contentType.split(';')[0]!.trim().toLowerCase() : '(none)';

/** Null when `got` is what case `c` expects, else its first difference. */
export function differenceOf(c: GoldenCase, got: Answer): string | null {
  const want = c.expect;
  if (got.status !== want.status)
    return `status: expected ${want.status}, got ${got.status} ${brief(got.text, 120)}`;
  const media = mediaType(got.headers.get('content-type'));
  if (media !== want.contentType) return `content-type: expected ${want.contentType}, got ${media}`;
  for (const [name, value] of Object.entries(want.headers ?? {})) {
    const header = got.headers.get(name);
    if (header !== value) return `header ${name}: expected ${brief(value)}, got ${brief(header)}`;
  }
  if (typeof want.body === 'string') {
    return c.compare === 'shape' || got.text === want.body ? null : textDifference(want.body, got.text);
  }
  let body: unknown;
  try {
    body = JSON.parse(got.text);
  } catch {
    return `body: expected JSON, got ${brief(got.text, 80)}`;
  }
  if (c.compare === 'shape') return shapeDifference(want.body, body, 'body');
  return new JsonMatch(c).difference(want.body, body, 'body');
}

/** Where two texts part: the character, its line, and a little of each around it. */
function textDifference(want: string, got: string): string {
  let i = 0;
  while (i < want.length && i < got.length && want[i] === got[i]) i++;
  const line = want.slice(0, i).split('\n').length;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 20), i + 30));
  return `body text differs at char ${i} (line ${line}; ${want.length} chars expected, ${got.length} got): expected ${around(want)}, got ${around(got)}`;
}

function shapeDifference(want: unknown, got: unknown, path: string): string | null {
  const type = jsonType(want);
  if (type !== jsonType(got)) return `${path}: expected a ${type}, got ${brief(got)}`;
  if (type === 'array') {
    const [w, g] = [want as unknown[], got as unknown[]];
    if (w.length !== g.length) return `${path}: expected ${w.length} items, got ${g.length}`;
    for (let i = 0; i < w.length; i++) {
      const d = shapeDifference(w[i], g[i], `${path}[${i}]`);
      if (d) return d;
    }
  } else if (type === 'object') {
    const [w, g] = [want as Record<string, unknown>, got as Record<string, unknown>];
    const keys = Object.keys(w).sort();
    const gotKeys = Object.keys(g).sort();
    if (keys.join('\0') !== gotKeys.join('\0'))
      return `${path}: expected keys ${brief(keys)}, got ${brief(gotKeys)}`;
    for (const k of keys) {
      const d = shapeDifference(w[k], g[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return null;
}

/** Ids first (a wrong id explains the rest of a difference), then by name. */
const keyOrder = (a: string, b: string): number =>
  Number(b.endsWith('id')) - Number(a.endsWith('id')) || (a < b ? -1 : a > b ? 1 : 0);

class JsonMatch {
  /** The envelope's list (`body.builds`) when the case compares it as a multiset. */
  private readonly unorderedList: string | null;
  /** Paths under the body whose values are not compared. */
  private readonly ignored: Set<string>;
  /** Keys a row of the envelope's list may hold that the case does not name (Buildbot 4.3's). */
  private readonly added: ReadonlySet<string>;

  constructor(c: GoldenCase) {
    const body = c.expect.body;
    const plural =
      jsonType(body) === 'object' && 'meta' in (body as object)
        ? Object.keys(body as object).find((k) => k !== 'meta')
        : undefined;
    this.unorderedList = c.compare === 'unordered' && plural ? `body.${plural}` : null;
    this.ignored = new Set(c.expect.ignore ?? []);
    this.added = new Set(plural ? (ADDED_FIELDS[plural] ?? []) : []);
  }

  difference(want: unknown, got: unknown, path: string): string | null {
    if (this.ignored.has(path.replace(/^body\.?/, ''))) {
      return jsonType(want) === jsonType(got)
        ? null
        : `${path}: expected a ${jsonType(want)}, got ${brief(got)}`;
    }
    if (jsonType(want) !== jsonType(got)) return `${path}: expected ${brief(want)}, got ${brief(got)}`;
    if (Array.isArray(want)) {
      const key = /\.([^.[\]]+)$/.exec(path)?.[1] ?? '';
      // An item of the list is at `body.builds[]...`, so only the list itself is unordered.
      const unordered = path === this.unorderedList || UNORDERED_KEYS.has(key);
      return unordered
        ? this.multisetDifference(want, got as unknown[], path)
        : this.listDifference(want, got as unknown[], path);
    }
    if (jsonType(want) === 'object') {
      return this.objectDifference(want as Record<string, unknown>, got as Record<string, unknown>, path);
    }
    return want === got ? null : `${path}: expected ${brief(want)}, got ${brief(got)}`;
  }

  private listDifference(want: unknown[], got: unknown[], path: string): string | null {
    if (want.length !== got.length) return `${path}: expected ${want.length} items, got ${got.length}`;
    for (let i = 0; i < want.length; i++) {
      const d = this.difference(want[i], got[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }

  private objectDifference(
    want: Record<string, unknown>,
    got: Record<string, unknown>,
    path: string,
  ): string | null {
    const missing = Object.keys(want).find((k) => !(k in got));
    if (missing !== undefined) return `${path}: missing key ${brief(missing)}`;
    const extra = Object.keys(got).find((k) => !(k in want) && !this.added.has(k));
    if (extra !== undefined) return `${path}: unexpected key ${brief(extra)}`;
    for (const k of Object.keys(want).sort(keyOrder)) {
      if (k === HEARTBEAT) continue;
      const d = this.difference(want[k], got[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }

  /** Each expected item matched to one received item, none left over on either side. */
  private multisetDifference(want: unknown[], got: unknown[], path: string): string | null {
    const free = got.map((_, i) => i);
    const same = (w: unknown, g: unknown) => this.difference(w, g, `${path}[]`) === null;
    for (const item of want) {
      const at = free.findIndex((i) => same(item, got[i]));
      if (at >= 0) {
        free.splice(at, 1);
        continue;
      }
      const near = free.length
        ? this.nearest(
            item,
            free.map((i) => got[i]),
          )
        : undefined;
      const hint = near === undefined ? '' : `; nearest: ${this.difference(item, near, `${path}[?]`)}`;
      return `${path}: no match for expected item ${brief(item, 80)} (${want.length} expected, ${got.length} got)${hint}`;
    }
    return free.length
      ? `${path}: ${free.length} unexpected item(s), e.g. ${brief(got[free[0]!], 80)}`
      : null;
  }

  /** The candidate with the same ids as `item` (the same resource, answered otherwise), else the first. */
  private nearest(item: unknown, candidates: unknown[]): unknown {
    if (jsonType(item) !== 'object') return candidates[0];
    const w = item as Record<string, unknown>;
    const ids = Object.keys(w).filter((k) => k.endsWith('id'));
    const sameIds = (c: unknown) =>
      jsonType(c) === 'object' &&
      ids.length > 0 &&
      ids.every((k) => (c as Record<string, unknown>)[k] === w[k]);
    return candidates.find(sameIds) ?? candidates[0];
  }
}
