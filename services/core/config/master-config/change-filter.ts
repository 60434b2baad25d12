// A scheduler's change_filter, in Buildbot's ChangeFilter names (buildbot/changes/filter.py,
// buildbot/util/ssfilter.py). For each of project, repository, branch, category and codebase:
// - `<field>`: the value, or a list of values, the change's field must equal;
// - `<field>_not_eq`: the value(s) it must not equal;
// - `<field>_re`: regular expression(s), one of which must match at the start of the field
//   (Python's re.match: anchored at the start, not at the end; write `$` to anchor the end);
// - `<field>_not_re`: regular expression(s) none of which may match there.
// Each given key must hold (they are and-ed). A branch value may be null, the default branch.
// A field that is null (a change without a category, on the default branch) matches no `_re`
// and every `_not_re`, as in Buildbot. The expressions are JavaScript's: Python's syntax is
// the same for what filters use (classes, groups, alternatives, anchors); Python's named
// groups `(?P<name>...)` are accepted and read as `(?<name>...)`. Buildbot's `*_fn` and
// `filter_fn` (Python callables) and the `property_*` filters have no form here.
import { z } from 'zod';

/** Python's named groups, which JavaScript writes without the P. */
export const pythonRegexSource = (s: string) =>
  s.replaceAll('(?P<', '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');

const oneRegex = z.string().refine(
  (s) => {
    try {
      new RegExp(pythonRegexSource(s));
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected a regular expression' },
);

const values = z.union([z.string(), z.array(z.string()).min(1)]);
const branchValues = z.union([z.string().nullable(), z.array(z.string().nullable()).min(1)]);
const regexes = z.union([oneRegex, z.array(oneRegex).min(1)]);

export const FILTER_FIELDS = ['project', 'repository', 'branch', 'category', 'codebase'] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

const fieldKeys = <F extends FilterField, V extends z.ZodTypeAny>(field: F, eq: V) =>
  ({
    [field]: eq.optional(),
    [`${field}_not_eq`]: eq.optional(),
    [`${field}_re`]: regexes.optional(),
    [`${field}_not_re`]: regexes.optional(),
  }) as {
    [K in F | `${F}_not_eq`]: z.ZodOptional<V>;
  } & { [K in `${F}_re` | `${F}_not_re`]: z.ZodOptional<typeof regexes> };

export const changeFilter = z
  .object({
    ...fieldKeys('project', values),
    ...fieldKeys('repository', values),
    ...fieldKeys('branch', branchValues),
    ...fieldKeys('category', values),
    ...fieldKeys('codebase', values),
  })
  .strict();

export type ChangeFilterConfig = z.infer<typeof changeFilter>;

/** True if the filter says anything about the branch. */
export const filtersBranch = (f: ChangeFilterConfig | undefined) =>
  f !== undefined && (['branch', 'branch_not_eq', 'branch_re', 'branch_not_re'] as const).some((k) => k in f);
