// Buildbot's Interpolate (buildbot/process/properties.py), parsed once and rendered per build.
//
// A template is text with substitutions `%(selector:key[:op...])s`:
// - selectors: prop:NAME (a build property), src:CODEBASE:ATTR (branch, revision, repository,
//   project or codebase of the build's source stamp for that codebase; the empty codebase is
//   `src::ATTR`), kw:NAME (the template's own keywords), worker:NAME (the worker's info:
//   admin, host, access_uri, version) and secret:NAME (a secrets provider's value);
// - ops, as Buildbot's: none or `-default` (the value if the key exists, else the default),
//   `~default` (the value if it is true in Python's sense, else the default), `+replacement`
//   (the replacement if the key exists, else nothing), `?|yes|no` (yes if the key exists,
//   else no) and `#?|yes|no` (yes if the value is true, else no). The default, replacement
//   and both branches are templates themselves, so they nest: `%(prop:a:-%(prop:b)s)s`.
// - a value renders as Python's str() would (True, None elided to nothing, ['a', 'b']);
//   `%%` is a percent sign.
// Flotilla renders every command string this way without an explicit Interpolate(), so text
// that merely looks like a format (`date +%Y`, a lone `%(`) is left as it is; a well-formed
// substitution with a bad selector or key is a configuration error, as Buildbot's
// config.error makes it.
import { pyNumber, pyRepr } from './python.js';

export type Selector = 'prop' | 'src' | 'kw' | 'worker' | 'secret';

export interface Lookup {
  selector: Selector;
  /** src only: the codebase. */
  codebase?: string;
  key: string;
  op: '-' | '~' | '+' | '?' | '#?';
  /** The default (-, ~), the replacement (+) or the branch taken when the key is there (?, #?). */
  arg: Part[];
  /** ?, #? only: the branch taken when it is not. */
  otherwise: Part[];
}

export type Part = string | Lookup;

export class InterpolationError extends Error {
  override name = 'InterpolationError';
}

// Buildbot's Interpolate.identifier_re.
const IDENTIFIER = /^[\w.-]*$/;

/** Where a substitution's `(` is closed, counting nested parentheses as Python's % does. */
function closing(text: string, open: number): number {
  let depth = 1;
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/** Split at the first `delim` outside parentheses (Buildbot's _splitBalancedParen). */
function splitBalanced(delim: string, text: string): [string, string] | null {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    if (c === ')' && --depth < 0) return null;
    if (depth === 0 && c === delim) return [text.slice(0, i), text.slice(i + 1)];
  }
  return null;
}

function splitOnce(s: string): [string, string | undefined] {
  const i = s.indexOf(':');
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

function parseKey(key: string, kw: ReadonlySet<string> | null): Lookup {
  const [selector, arg] = splitOnce(key);
  if (arg === undefined)
    throw new InterpolationError(`invalid Interpolate substitution without selector '${key}'`);
  let name: string;
  let repl: string | undefined;
  let codebase: string | undefined;
  switch (selector) {
    case 'prop':
    case 'kw':
      [name, repl] = splitOnce(arg);
      if (!IDENTIFIER.test(name)) {
        const what = selector === 'prop' ? 'Property name' : 'Keyword';
        throw new InterpolationError(`${what} must be alphanumeric for ${selector} Interpolation '${arg}'`);
      }
      if (selector === 'kw' && kw && !kw.has(name))
        throw new InterpolationError(`no keyword '${name}' for kw Interpolation '${arg}'`);
      break;
    case 'worker':
    case 'secret':
      [name, repl] = splitOnce(arg);
      break;
    case 'src': {
      const [cb, rest] = splitOnce(arg);
      if (rest === undefined)
        throw new InterpolationError(
          `Must specify both codebase and attribute for src Interpolation '${arg}'`,
        );
      [name, repl] = splitOnce(rest);
      codebase = cb;
      if (!IDENTIFIER.test(cb))
        throw new InterpolationError(`Codebase must be alphanumeric for src Interpolation '${arg}'`);
      if (!IDENTIFIER.test(name))
        throw new InterpolationError(`Attribute must be alphanumeric for src Interpolation '${arg}'`);
      break;
    }
    default:
      throw new InterpolationError(`invalid Interpolate selector '${selector}'`);
  }
  const r = repl ?? '-';
  const base = { selector: selector as Selector, key: name, ...(codebase !== undefined ? { codebase } : {}) };
  for (const op of ['-', '~', '+'] as const) {
    if (r.startsWith(op)) return { ...base, op, arg: parse(r.slice(1), kw), otherwise: [] };
  }
  for (const op of ['?', '#?'] as const) {
    if (!r.startsWith(op)) continue;
    const tail = r.slice(op.length);
    const delim = tail[0];
    if (delim === undefined || delim === '(')
      throw new InterpolationError(`invalid Interpolate ternary delimiter '${delim ?? ''}'`);
    const parts = splitBalanced(delim, tail.slice(1));
    if (!parts)
      throw new InterpolationError(
        `invalid Interpolate ternary expression '${tail.slice(1)}' with delimiter '${delim}'`,
      );
    return { ...base, op, arg: parse(parts[0], kw), otherwise: parse(parts[1], kw) };
  }
  throw new InterpolationError(`invalid Interpolate default type '${r[0]}'`);
}

/**
 * A template's parts. `kw`, when given, is the set of keywords the template may name (a
 * `%(kw:x)s` naming another is an error, as Python's KeyError would be at render time).
 */
export function parse(template: string, kw: ReadonlySet<string> | null = null): Part[] {
  const parts: Part[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    const at = template.indexOf('%', i);
    if (at < 0) break;
    text += template.slice(i, at);
    if (template[at + 1] === '%') {
      text += '%';
      i = at + 2;
      continue;
    }
    const end = template[at + 1] === '(' ? closing(template, at + 1) : -1;
    if (end < 0 || template[end + 1] !== 's') {
      text += '%';
      i = at + 1;
      continue;
    }
    if (text) parts.push(text);
    text = '';
    parts.push(parseKey(template.slice(at + 2, end), kw));
    i = end + 2;
  }
  text += template.slice(i);
  if (text) parts.push(text);
  return parts;
}

/** Python's truth of a value. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** Python's str() of a value, None as nothing (Buildbot's elideNoneAs=''). */
export function pyStr(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return pyNumber(v);
  return pyRepr(v);
}

/** What substitutions read from. `undefined` means the key is not there. */
export interface Sources {
  prop(name: string): { value: unknown } | undefined;
  src(codebase: string, attr: string): { value: unknown } | undefined;
  kw(name: string): { value: unknown } | undefined;
  worker(name: string): { value: unknown } | undefined;
  /** A secret's value; throws when no provider has it (a secret is never merely absent). */
  secret(name: string): string;
}

function lookup(l: Lookup, s: Sources): { value: unknown } | undefined {
  switch (l.selector) {
    case 'prop':
      return s.prop(l.key);
    case 'src':
      return s.src(l.codebase ?? '', l.key);
    case 'kw':
      return s.kw(l.key);
    case 'worker':
      return s.worker(l.key);
    case 'secret':
      return { value: s.secret(l.key) };
  }
}

/** Render parsed parts (Buildbot's _Lookup: which branch each op takes). */
export function renderParts(parts: readonly Part[], s: Sources): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') {
      out += p;
      continue;
    }
    const found = lookup(p, s);
    switch (p.op) {
      case '-':
        out += found ? pyStr(found.value) : renderParts(p.arg, s);
        break;
      case '~':
        out += found && truthy(found.value) ? pyStr(found.value) : renderParts(p.arg, s);
        break;
      case '+':
        out += found ? renderParts(p.arg, s) : '';
        break;
      case '?':
        out += renderParts(found ? p.arg : p.otherwise, s);
        break;
      case '#?':
        out += renderParts(found && truthy(found.value) ? p.arg : p.otherwise, s);
        break;
    }
  }
  return out;
}
