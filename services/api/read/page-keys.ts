// What a kept page depends on, for the write notices (../cache/write-notices.ts): each table
// its statement reads, or only the part of it that the statement reads, spelled as
// ../cache/keys.ts declares the parts (`steps/buildid=5`, `builds/builderid=3/complete=t`).
// A page of a finished build's steps is then kept while other builds run; a table read any
// other way counts whole, so anything written to it expires the page.
//
// A part is named only where the statement cannot see a row outside it: the endpoint's path
// fixes it (Endpoint.parts, beside the scope that fixes it in SQL), the row it found does
// (Endpoint.rowParts: the build a path by builder and number names; the build and step a
// log's path names, which the statement reads beside the page, Endpoint.pathIds), or a
// filter its resource declares does (Resource.partFilter: `complete` on builds). Filters,
// order, offset and limit choose among the part's rows, and every write that moves a row
// into or out of the part names the part (a notice is sent for the row before and after the
// write), so pages whose membership shifts are expired too.
import { isPartTable, narrowed, type Part, type Parts, type PartTable, partKey } from '../cache/keys.js';
import type { Envelope } from '../query/envelope.js';
import type { ResultSpec } from '../query/spec.js';
import type { Endpoint, PathArgs } from '../registry/model.js';

/** The notice keys of a page read from `tables` (the statement's own, ../cache/versions.ts). */
export function pageKeys(
  endpoint: Endpoint,
  args: PathArgs,
  spec: ResultSpec,
  tables: readonly string[],
  env?: Pick<Envelope, 'rows' | 'names'>,
  pathIds?: Readonly<Record<string, unknown>>,
): readonly string[] {
  const row = env ? firstRow(env) : () => undefined;
  const parts: Record<string, Part<PartTable> | undefined> = {
    ...endpoint.parts?.(args),
    ...((env || pathIds) && endpoint.rowParts?.(args, (f) => row(f) ?? pathIds?.[f])),
  };
  const filter = partFilter(endpoint, spec);
  if (filter) parts[filter.table] = narrowed(filter.table, parts[filter.table], filter.field, filter.value);
  return tables.map((t) => {
    const part = isPartTable(t) ? (parts as Parts)[t] : undefined;
    return part ? partKey(t as PartTable, part as Part<typeof t & PartTable>) : t;
  });
}

/** The first row's value of a field (rows as arrays in the order of `names`). */
function firstRow(env: Pick<Envelope, 'rows' | 'names'>): (field: string) => unknown {
  return (field) => {
    const row = env.rows[0];
    const i = env.names?.indexOf(field) ?? -1;
    return Array.isArray(row) && i >= 0 ? row[i] : undefined;
  };
}

/** The resource's part filter (Resource.partFilter), when the request has it with one boolean. */
function partFilter(endpoint: Endpoint, spec: ResultSpec) {
  const declared = endpoint.resource.partFilter;
  if (!declared || endpoint.kind !== 'rows') return null;
  for (const f of spec.filters) {
    if (f.field.name !== declared.field || f.op !== 'eq' || f.values.length !== 1) continue;
    const value = f.values[0];
    if (typeof value === 'boolean') return { ...declared, value };
  }
  return null;
}
