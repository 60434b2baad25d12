// What a secret looks like once a log or a label shows it. A worker echoes the command it
// runs before its output, in encodings of its own, so the value itself is not all there is
// to look for:
// - buildbot-worker (runprocess.py) shows a list command shell-quoted (pipes.quote: a `'`
//   becomes `'"'"'`), and its ` argv:` line (and `command timed out ... running`) as
//   Python's repr of a list of bytes: `\` doubled, `'` escaped unless the word holds a `'`
//   and no `"` (then the word is in double quotes and `'` is left alone), tab, newline and
//   carriage return as \t \n \r, any other byte under 0x20 or over 0x7e as \xhh (so a
//   non-ASCII character as the \xhh of each of its UTF-8 bytes);
// - Flotilla's agent (services/worker/command.ts) shows the command as it is, and argv
//   with `\`, `'` and newline escaped;
// - Python's repr of a str (as a Python tool would print one) keeps printable non-ASCII;
// - JSON, as tools print values (non-ASCII as it is, or as \uXXXX as Python's json does).
// Each form is of the secret inside a larger word, whose quoting it does not include.
//
// A log is redacted line by line, so a secret of several lines is also looked for line by
// line: each line of it (surrounding blanks trimmed) of at least MIN_FRAGMENT characters.
// Labels (state strings, link names) are also cut at blanks (Buildbot's command summary
// keeps the command's first words), so for them each word of at least MIN_FRAGMENT
// characters is looked for too. Shorter lines and words are left: a line of `}` or a word
// like `to` says next to nothing of the secret, and would blank that text everywhere.

/** The shortest line (or, in labels, word) of a secret that is redacted on its own. */
export const MIN_FRAGMENT = 4;

const hex = (n: number) => `\\x${n.toString(16).padStart(2, '0')}`;
const NAMED: Record<number, string> = { 9: '\\t', 10: '\\n', 13: '\\r' };

/** The inside of Python's repr of `value` as bytes (UTF-8) between `quote`s. */
function pyBytesBody(value: string, quote: string): string {
  let out = '';
  for (const b of Buffer.from(value, 'utf8')) {
    const ch = String.fromCharCode(b);
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (NAMED[b]) out += NAMED[b];
    else if (b < 0x20 || b >= 0x7f) out += hex(b);
    else out += ch;
  }
  return out;
}

/** The inside of Python's repr of `value` as a str between `quote`s (printability approximated). */
function pyStrBody(value: string, quote: string): string {
  let out = '';
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (NAMED[c]) out += NAMED[c];
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += hex(c);
    else out += ch;
  }
  return out;
}

// JSON with every non-ASCII character escaped, as Python's json.dumps writes it.
const jsonAscii = (value: string) =>
  JSON.stringify(value)
    .slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The whole secret in each encoding a log may show it in (the value first; no repeats), and
 * the same of it with surrounding blanks trimmed (a file's last newline, kept with
 * `strip: false`, is never in a line of a log).
 */
export function wholeForms(value: string): string[] {
  return [...new Set([value, value.trim()].flatMap(formsOf))];
}

function formsOf(value: string): string[] {
  return [
    ...new Set([
      value,
      value.replace(/'/g, `'"'"'`),
      pyBytesBody(value, "'"),
      pyBytesBody(value, '"'),
      pyStrBody(value, "'"),
      pyStrBody(value, '"'),
      value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n'),
      JSON.stringify(value).slice(1, -1),
      jsonAscii(value),
    ]),
  ];
}

const long = (parts: string[]) => parts.map((p) => p.trim()).filter((p) => p.length >= MIN_FRAGMENT);

/** For a secret of several lines, each line long enough to stand for it, in the forms that keep lines. */
export function lineFragments(value: string): string[] {
  if (!/[\r\n]/.test(value.trim())) return [];
  const forms = [value, value.replace(/'/g, `'"'"'`)];
  return [...new Set(long(forms.flatMap((f) => f.split(/\r\n|\r|\n/))))];
}

/** For a secret of several words, each word long enough to stand for it. */
export function wordFragments(value: string): string[] {
  const words = value.trim().split(/\s+/);
  return words.length > 1 ? [...new Set(long(words))] : [];
}
