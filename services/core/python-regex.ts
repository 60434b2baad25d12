// Python's regular expressions, which Buildbot's configurations are written in, as
// JavaScript's. The syntax is the same for what build output patterns use (classes, groups,
// alternatives, anchors); what differs is translated: flags given inline at the start
// (`(?i)`, Buildbot's own default warningPattern `(?i).*warning[: ].*`), which JavaScript
// takes as flags; named groups `(?P<name>...)` and `(?P=name)`; `\A` and `\Z`. Python's
// re.match (anchored at the start) is a sticky expression run from 0.
import { pythonRegexSource } from './config/master-config/change-filter.js';

// i, m and s mean the same in both; a and u change nothing Python 3 does to text; L and x
// (locale, verbose) have no JavaScript form.
const FLAGS: Record<string, string> = { i: 'i', m: 'm', s: 's', a: '', u: '' };

/** The expression as JavaScript's; throws SyntaxError when it has no JavaScript form. */
export function pythonRegExp(pattern: string, extraFlags = ''): RegExp {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([a-zA-Z]+)\)/.exec(source);
  if (inline) {
    for (const f of inline[1]!) {
      const js = FLAGS[f];
      if (js === undefined) throw new SyntaxError(`flag (?${f}) has no JavaScript form`);
      if (!flags.includes(js)) flags += js;
    }
    source = source.slice(inline[0].length);
  }
  source = pythonRegexSource(source)
    .replace(/(^|[^\\])\\A/g, '$1^')
    .replace(/(^|[^\\])\\Z/g, '$1(?![\\s\\S])');
  return new RegExp(source, flags + extraFlags);
}

/** Python's re.match: whether (and how) `re` matches at the start of `text`. */
export function matchAtStart(re: RegExp, text: string): RegExpExecArray | null {
  const sticky = re.sticky ? re : new RegExp(re.source, `${re.flags}y`);
  sticky.lastIndex = 0;
  return sticky.exec(text);
}
