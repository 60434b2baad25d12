// The parts of the tables running builds write all the time, declared once. A write to one
// of these tables sends a notice for each part of it that holds a row it changed, before and
// after the write (flotilla.write_keys, migration 0016), named `<table>/<column>=<value>`,
// columns in the order declared here (`builds/builderid=3/complete=t`); a kept page that
// reads only one part of such a table stays current across writes to the others (README.md).
//
// The SQL spells the same keys again; test/api/write-keys.test.ts makes real writes to each
// table and checks that the notices name exactly the keys this table spells, so a typo on
// either side fails there, naming the key. The resources say which part a page reads in this
// table's terms (registry/model.ts, Endpoint.parts), which the compiler checks.

/** Each partitioned table's parts: the columns that name one, in the order a key spells them. */
export const PARTS = {
  builds: [['id'], ['builderid'], ['complete'], ['builderid', 'complete']],
  steps: [['id'], ['buildid']],
  logs: [['id'], ['stepid']],
  logchunks: [['logid']],
  build_properties: [['buildid']],
} as const satisfies Record<string, readonly (readonly string[])[]>;

export type PartTable = keyof typeof PARTS;

/**
 * `complete` is whether a build has finished (complete_at set, written `t` or `f`); the rest
 * are ids, as a path's arguments hold them (undefined when the path lacks one: then the part
 * is not known, and its table counts whole).
 */
type ValueOf<C extends string> = C extends 'complete' ? boolean : number | string | undefined;
type PartOfShape<S extends readonly string[]> = { readonly [C in S[number]]: ValueOf<C> };
type Shapes<T extends PartTable> = (typeof PARTS)[T][number];

/** One part of table T: a value for each column of one of its shapes (`{ buildid: 5 }` of steps). */
export type Part<T extends PartTable> =
  Shapes<T> extends infer S ? (S extends readonly string[] ? PartOfShape<S> : never) : never;

/** The parts a page reads, by table; a table not named counts whole. */
export type Parts = { readonly [T in PartTable]?: Part<T> };

export function isPartTable(table: string): table is PartTable {
  return Object.hasOwn(PARTS, table);
}

/** The shape of `table` with exactly these columns, in its declared order; undefined when none. */
function shapeOf(table: PartTable, columns: readonly string[]): readonly string[] | undefined {
  return PARTS[table].find(
    (s: readonly string[]) => s.length === columns.length && s.every((c) => columns.includes(c)),
  );
}

/** The notice key of one part, as the SQL spells it; the table's own name when a value is missing. */
export function partKey<T extends PartTable>(table: T, part: Part<T>): string {
  const values = part as Readonly<Record<string, number | string | boolean | undefined>>;
  const shape = shapeOf(table, Object.keys(values));
  // The types admit no other part; a caller that casts its way past them finds out here.
  if (!shape) throw new Error(`${table} has no part named by ${Object.keys(values).join(', ')}`);
  if (shape.some((c) => values[c] === undefined)) return table;
  const spelled = shape.map((c) => {
    const v = values[c];
    return `${c}=${typeof v === 'boolean' ? (v ? 't' : 'f') : v}`;
  });
  return [table, ...spelled].join('/');
}

/**
 * The part narrowed further by one more column, when the table has a part of those columns
 * (a builder's builds, filtered to finished ones: `builds/builderid=3/complete=t`); else the
 * part as it was. With no part, the part of that column alone, if there is one.
 */
export function narrowed<T extends PartTable>(
  table: T,
  part: Part<T> | undefined,
  column: string,
  value: number | string | boolean,
): Part<T> | undefined {
  const columns = Object.keys(part ?? {});
  if (columns.includes(column) || !shapeOf(table, [...columns, column])) return part;
  return { ...(part ?? {}), [column]: value } as Part<T>;
}

/** Every notice key of a row, one per part that holds it: what a write of it must send. */
export function rowKeys(
  table: PartTable,
  row: Readonly<Record<string, number | string | boolean | undefined>>,
): string[] {
  return PARTS[table].map((shape: readonly string[]) =>
    partKey(table, Object.fromEntries(shape.map((c) => [c, row[c]])) as Part<typeof table>),
  );
}
