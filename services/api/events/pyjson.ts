// The JSON of Buildbot's event endpoints, as Python's json.dumps writes it there: keys in
// insertion order (no sort_keys), every character outside printable ASCII escaped, and the
// separators of the endpoint: compact (',' ':') on /ws, Python's defaults (', ' ': ') on SSE.
// Scalars are written exactly as the REST API writes them (reply/pyjson.ts).
import { pyRepr } from '../../core/python.js';
import { pyDumps, pyString } from '../reply/pyjson.js';

export type Separators = 'compact' | 'default';

export function pyDumpsOrdered(value: unknown, separators: Separators): string {
  const item = separators === 'compact' ? ',' : ', ';
  const colon = separators === 'compact' ? ':' : ': ';
  const parts: string[] = [];
  const write = (v: unknown): void => {
    if (Array.isArray(v)) {
      parts.push('[');
      v.forEach((x, i) => {
        if (i > 0) parts.push(item);
        write(x);
      });
      parts.push(']');
    } else if (typeof v === 'object' && v !== null) {
      parts.push('{');
      let first = true;
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined) continue;
        if (!first) parts.push(item);
        first = false;
        parts.push(pyString(k), colon);
        write(x);
      }
      parts.push('}');
    } else {
      parts.push(typeof v === 'string' ? pyString(v) : pyDumps(v));
    }
  };
  write(value);
  return parts.join('');
}

/**
 * Python's str() of a decoded JSON value, as Buildbot's error messages embed it
 * (`invalid path format '12'`, `no such command type 'x'`).
 */
export function pyStr(v: unknown, nested = false): string {
  if (typeof v === 'string') return nested ? pyRepr(v) : v;
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `[${v.map((x) => pyStr(x, true)).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyStr(x, true)}`)
      .join(', ')}}`;
  }
  return pyDumps(v);
}
