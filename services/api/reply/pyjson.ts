// JSON text exactly as Buildbot writes it with Python's json.dumps(sort_keys=True,
// ensure_ascii=True): keys sorted by code point, every character outside printable ASCII
// escaped as \uXXXX, either compact (',' ':') or indented by two spaces (',' ': ').
// Clients diff our answers against Buildbot's byte for byte, so JSON.stringify will not do.
import { pyNumber } from '../../core/python.js';

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

// Python's ensure_ascii escapes everything but ' '..'~'.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;
const ESCAPE_ALL = /["\\\u0000-\u001f\u007f-\uffff]/g;

export function pyString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  return `"${s.replace(ESCAPE_ALL, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Object keys in code point order; rows built by the query engine already come that way. */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) return keys.sort(byCodePoint);
  }
  return keys;
}

// Compact form as one string built by concatenation: pages are rendered on every cache
// miss, and this takes about two thirds of the time of collecting parts and joining them.
function compact(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return pyString(v);
    case 'number':
      return pyNumber(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (Array.isArray(v)) {
        if (v.length === 0) return '[]';
        let out = `[${compact(v[0])}`;
        for (let i = 1; i < v.length; i++) out += `,${compact(v[i])}`;
        return `${out}]`;
      }
      const keys = sortedKeys(v);
      if (keys.length === 0) return '{}';
      const o = v as Record<string, unknown>;
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        out += `${i > 0 ? ',' : ''}${pyString(k)}:${compact(o[k])}`;
      }
      return `${out}}`;
    }
    default:
      return 'null';
  }
}

/**
 * A list of entities, each given as the array of its values under `names` (already in code
 * point order), in the compact form: what pyDumps writes for the same objects.
 */
export function pyRows(rows: readonly (readonly unknown[])[], names: readonly string[]): string {
  if (rows.length === 0) return '[]';
  const keys = names.map((n, i) => `${i > 0 ? ',' : '{'}${pyString(n)}:`);
  if (keys.length === 0) return `[${rows.map(() => '{}').join(',')}]`;
  let out = '[';
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    out += r > 0 ? ',' : '';
    for (let i = 0; i < keys.length; i++) out += keys[i]! + compact(row[i]);
    out += '}';
  }
  return `${out}]`;
}

export function pyDumps(value: unknown, indent?: number): string {
  if (indent === undefined) return compact(value);
  const parts: string[] = [];
  write(value, 0);
  return parts.join('');

  function write(v: unknown, depth: number): void {
    if (v === null || v === undefined) {
      parts.push('null');
    } else if (typeof v === 'string') {
      parts.push(pyString(v));
    } else if (typeof v === 'number') {
      parts.push(pyNumber(v));
    } else if (typeof v === 'boolean') {
      parts.push(v ? 'true' : 'false');
    } else if (typeof v === 'bigint') {
      parts.push(v.toString());
    } else if (Array.isArray(v)) {
      if (v.length === 0) return void parts.push('[]');
      parts.push('[');
      v.forEach((item, i) => {
        if (i > 0) parts.push(',');
        newline(depth + 1);
        write(item, depth + 1);
      });
      newline(depth);
      parts.push(']');
    } else if (typeof v === 'object') {
      const keys = sortedKeys(v as object);
      if (keys.length === 0) return void parts.push('{}');
      parts.push('{');
      keys.forEach((k, i) => {
        if (i > 0) parts.push(',');
        newline(depth + 1);
        parts.push(pyString(k), ': ');
        write((v as Record<string, unknown>)[k], depth + 1);
      });
      newline(depth);
      parts.push('}');
    } else {
      parts.push('null');
    }
  }

  function newline(depth: number): void {
    parts.push('\n', ' '.repeat(indent! * depth));
  }
}

/** An error body as Buildbot writes it: json.dumps(dict(error=msg)) with default separators. */
export function pyErrorBody(message: string): string {
  return `{"error": ${pyString(message)}}`;
}
