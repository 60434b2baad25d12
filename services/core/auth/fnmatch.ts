// Shell-style patterns as Buildbot's authz matches builder names and roles (Python's
// fnmatch on POSIX, so case-sensitive): `*` any run, `?` one character, `[abc]`, `[!abc]`,
// `[a-z]`; everything else literal. An unclosed `[` is a literal `[`, as in Python.

const cache = new Map<string, RegExp>();

function translate(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      if (j >= pattern.length) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, j).replace(/\\/g, '\\\\');
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      else if (body.startsWith('^')) body = `\\${body}`;
      out += `[${body}]`;
      i = j;
    } else out += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return `^(?:${out})$`;
}

export function fnmatch(name: string, pattern: string): boolean {
  let re = cache.get(pattern);
  if (!re) {
    try {
      re = new RegExp(translate(pattern), 'u');
    } catch {
      // A class JavaScript cannot compile ([z-a]) matches nothing, as Python's does.
      re = /$^/;
    }
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re.test(name);
}
