// Whether a change passes a scheduler's change_filter, by Buildbot's rules
// (buildbot/util/ssfilter.py's exact and regex filters, as ChangeFilter.filter_change uses them):
// - `<field>`: the change's value is one of the values (a null branch is the default branch,
//   matched by a null in the list; a null category matches no string);
// - `<field>_not_eq`: it is none of them (so a null category passes);
// - `<field>_re`: one expression matches at the start of the value (re.match); a null value
//   matches none;
// - `<field>_not_re`: no expression matches at the start; a null value passes;
// every key given must hold. The keys are described in
// services/core/config/master-config/change-filter.ts.
import {
  type ChangeFilterConfig,
  FILTER_FIELDS,
  type FilterField,
  pythonRegexSource,
} from '../../core/config/master-config/change-filter.js';

/** The fields of a change a filter reads (a change's facts, or a source stamp's). */
export type FilteredFields = { [F in FilterField]: string | null };

type Test = (value: string | null) => boolean;

const list = <T>(v: T | readonly T[]): readonly T[] => (Array.isArray(v) ? v : [v as T]);

/** Python's re.match: a match that begins at the start of the value (the sticky flag). */
function startsWithMatch(sources: readonly string[]): Test {
  const compiled = sources.map((s) => new RegExp(pythonRegexSource(s), 'y'));
  return (value) =>
    value !== null &&
    compiled.some((r) => {
      r.lastIndex = 0;
      return r.test(value);
    });
}

function fieldTests(f: ChangeFilterConfig, field: FilterField): Test[] {
  const eq = f[field];
  const notEq = f[`${field}_not_eq`];
  const re = f[`${field}_re`];
  const notRe = f[`${field}_not_re`];
  const tests: Test[] = [];
  if (eq !== undefined) {
    const wanted = list<string | null>(eq);
    tests.push((v) => wanted.includes(v));
  }
  if (notEq !== undefined) {
    const unwanted = list<string | null>(notEq);
    tests.push((v) => !unwanted.includes(v));
  }
  if (re !== undefined) tests.push(startsWithMatch(list(re)));
  if (notRe !== undefined) {
    const match = startsWithMatch(list(notRe));
    tests.push((v) => !match(v));
  }
  return tests;
}

/** The filter as a predicate over a change's fields; no filter passes everything. */
export function compileChangeFilter(f: ChangeFilterConfig | undefined): (c: FilteredFields) => boolean {
  if (f === undefined) return () => true;
  const tests = FILTER_FIELDS.flatMap((field) => fieldTests(f, field).map((t) => ({ field, t })));
  return (c) => tests.every(({ field, t }) => t(c[field]));
}
