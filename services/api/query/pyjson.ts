// JSON text exactly as Buildbot writes it with Python's json.dumps(sort_keys=True,
// ensure_ascii=True): keys sorted by code point, every character outside printable ASCII
// escaped as \uXXXX, either compact (',' ':') or indented by two spaces (',' ': ').
// Clients diff our answers against Buildbot's byte for byte, so JSON.stringify will not do.

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

function pyNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
  // Python's float repr: shortest round-trip digits, exponent with sign and two digits.
  const s = String(n);
  if (s.includes('e')) {
    const [m, e] = s.split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '').padStart(2, '0');
    return `${m}e${sign}${digits}`;
  }
  return s.includes('.') ? s : `${s}.0`;
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function pyDumps(value: unknown, indent?: number): string {
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
      const keys = Object.keys(v as object).sort(byCodePoint);
      if (keys.length === 0) return void parts.push('{}');
      parts.push('{');
      keys.forEach((k, i) => {
        if (i > 0) parts.push(',');
        newline(depth + 1);
        parts.push(pyString(k), indent === undefined ? ':' : ': ');
        write((v as Record<string, unknown>)[k], depth + 1);
      });
      newline(depth);
      parts.push('}');
    } else {
      parts.push('null');
    }
  }

  function newline(depth: number): void {
    if (indent !== undefined) parts.push('\n', ' '.repeat(indent * depth));
  }
}

/** An error body as Buildbot writes it: json.dumps(dict(error=msg)) with default separators. */
export function pyErrorBody(message: string): string {
  return `{"error": ${pyString(message)}}`;
}
