// Event paths as Buildbot's message queue matches them (util/tuplematch.py): a path is split
// on '/', `*` stands for exactly one element, and a routing key matches only a path of its
// own length. There is no multi-level wildcard.

/** The elements of a path, null for `*`. */
export type Pattern = readonly (string | null)[];

export function parsePattern(path: string): Pattern {
  return path.split('/').map((p) => (p === '*' ? null : p));
}

export function matches(pattern: Pattern, key: readonly string[]): boolean {
  if (pattern.length !== key.length) return false;
  for (let i = 0; i < key.length; i++) {
    const p = pattern[i];
    if (p !== null && p !== key[i]) return false;
  }
  return true;
}

const LOG_LINES = /^logs\/(\d{1,15})\/lines$/;

/** The log whose new lines a path asks for (`logs/<logid>/lines`, our opt-in path), or null. */
export function logLinesOf(path: string): number | null {
  const m = LOG_LINES.exec(path);
  return m ? Number(m[1]) : null;
}
