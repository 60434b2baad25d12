// Where Flotilla answers as Buildbot 4.3 and so no longer as the Buildbot 3.7 that the golden
// cases and the differential answers were recorded from (test/fixtures/buildbot-4.3/README.md,
// docs/compatibility.md "Buildbot 4.3"). Read by the comparers of those recordings, so that a
// 3.7 answer still checks everything 3.7 and 4.3 agree on; what 4.3 changed is checked by
// the 4.3 cases (test/fixtures/buildbot-4.3/cases.json).

/**
 * Fields Buildbot 4.3 added to entities 3.7 already had (data/builders.py, data/buildsets.py),
 * by envelope key. A 3.7 answer lacks them; a 4.3 case names them, so they are still compared.
 */
export const ADDED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  builders: ['description_format', 'description_html', 'projectid'],
  buildsets: ['rebuilt_buildid'],
};

// A builder's name is a String in 4.3 (an Identifier in 3.7): a filter value that is no
// identifier filters (200, none) instead of being refused (400).
const NAME_NOT_IDENTIFIER = new Set(['builders?name=%E2%9C%93']);

/**
 * The recorded 3.7 answers that Buildbot 4.3 answers otherwise as a whole: the root lists
 * the `projects` link too, /application.spec the new paths and fields, and a builder's name
 * is no longer an identifier.
 */
export function changedBy43(path: string): boolean {
  const relative = path.replace(/^\/+/, '');
  const bare = relative.split('?')[0]!;
  return bare === '' || bare === 'application.spec' || NAME_NOT_IDENTIFIER.has(relative);
}

/** A JSON answer's body without the fields 4.3 added to its envelope's rows. */
export function without43Fields(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const o = body as Record<string, unknown>;
  const out: Record<string, unknown> = { ...o };
  for (const [plural, fields] of Object.entries(ADDED_FIELDS)) {
    const rows = o[plural];
    if (!Array.isArray(rows)) continue;
    out[plural] = rows.map((r) =>
      r && typeof r === 'object'
        ? Object.fromEntries(Object.entries(r).filter(([k]) => !fields.includes(k)))
        : r,
    );
  }
  return out;
}
