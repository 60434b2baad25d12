// Python's formatting of values, as Buildbot writes them into JSON and into its messages.

/** A number as Python writes it (repr of an int, or of a float: what JSON cannot tell apart). */
export function pyNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
  // Python's float repr: the shortest digits that round-trip (as JavaScript finds them),
  // positional when the exponent is from -4 to 15, else d.ddde+XX with at least two digits.
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  if (e >= -4 && e < 16) {
    if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
    const whole = digits.slice(0, e + 1).padEnd(e + 1, '0');
    const frac = digits.slice(e + 1);
    return `${sign}${whole}.${frac || '0'}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

/** Python's repr() of a string: single quotes unless the text holds one and no double quote. */
function reprString(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(/[\\\u0000-\u001f\u007f-\u00a0\u00ad\ud800-\udfff]/g, (c) => {
    const named: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    const code = c.charCodeAt(0);
    return (
      named[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`)
    );
  });
  return q + body.split(q).join(`\\${q}`) + q;
}

/** Python's repr() of a decoded JSON value. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return pyNumber(v);
  if (typeof v === 'string') return reprString(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as object)
      .map(([k, x]) => `${reprString(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  }
  return String(v);
}
