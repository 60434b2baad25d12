// Query string -> ResultSpec, with Buildbot's rules and messages. Where Buildbot silently
// ignores a parameter it cannot apply (an unknown operator, an operator that takes one value
// given several) or fails with a database error (a negative limit), we answer 400.
import { badQuery } from '../http/errors.js';
import type { Field } from '../registry/model.js';
import { BadValue, parsePyInt, valueFromString } from '../registry/types.js';
import {
  type Filter,
  type Operator,
  type OrderTerm,
  PLURAL_OPERATORS,
  type ResultSpec,
  SINGULAR_OPERATORS,
} from './spec.js';

/** Query parameters in order of first appearance, each with all its values (blank ones kept). */
export function groupArgs(query: string): Map<string, string[]> {
  const args = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(query)) {
    const list = args.get(k);
    if (list) list.push(v);
    else args.set(k, [v]);
  }
  return args;
}

const MAX_PAGE = 2n ** 63n - 1n;

function pageNumber(raw: string, what: 'limit' | 'offset'): number {
  const n = parsePyInt(raw);
  if (n === null) throw badQuery(`invalid ${what}`);
  if (n < 0n) throw badQuery(`${what} must not be negative`);
  if (n > MAX_PAGE) throw badQuery(`${what} is too large`);
  // Beyond 2^53 a page cannot start or stop anywhere a table reaches.
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

export function parseResultSpec(
  args: Map<string, string[]>,
  fields: readonly Field[],
  isCollection: boolean,
): ResultSpec {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const known = (name: string) => {
    const f = byName.get(name);
    if (!f) throw badQuery(`no such field '${name}'`);
    return f;
  };
  const convert = (f: Field, raw: string[], param: string) => {
    // PostgreSQL text cannot hold a NUL byte, so no stored value can equal or contain one.
    if (raw.some((v) => v.includes('\0'))) throw badQuery(`invalid filter value for ${param}`);
    try {
      return raw.map((v) => valueFromString(f.type, v));
    } catch (err) {
      if (err instanceof BadValue) throw badQuery(`invalid filter value for ${param}`);
      throw err;
    }
  };

  const spec: ResultSpec = {
    fields: null,
    filters: [],
    order: null,
    limit: null,
    offset: null,
    properties: null,
  };
  for (const [name, values] of args) {
    if (name === 'order') {
      spec.order = values.map((v): OrderTerm => {
        const desc = v.startsWith('-');
        return { field: known(desc ? v.slice(1) : v), desc };
      });
    } else if (name === 'field') {
      values.forEach(known);
      spec.fields = values;
    } else if (name === 'limit') {
      spec.limit = pageNumber(values[0]!, 'limit');
    } else if (name === 'offset') {
      spec.offset = pageNumber(values[0]!, 'offset');
    } else if (name === 'property') {
      if (values.some((v) => v.includes('\0'))) throw badQuery(`invalid property value for ${name}`);
      spec.properties = [...(spec.properties ?? []), ...values];
    } else if (byName.has(name)) {
      const f = byName.get(name)!;
      spec.filters.push({ field: f, op: 'eq', values: convert(f, values, name) });
    } else if (name.includes('__')) {
      const cut = name.lastIndexOf('__');
      const fieldName = name.slice(0, cut);
      const op = name.slice(cut + 2) as Operator;
      const f = byName.get(fieldName);
      if (!f) throw badQuery(`unrecognized query parameter '${name}'`);
      if (!SINGULAR_OPERATORS.includes(op)) {
        throw badQuery(`unknown filter operator '${op}' in '${name}' (use ${SINGULAR_OPERATORS.join(', ')})`);
      }
      if (values.length > 1 && !PLURAL_OPERATORS.includes(op)) {
        throw badQuery(`operator '${op}' takes one value, '${name}' was given ${values.length}`);
      }
      spec.filters.push({ field: f, op, values: convert(f, values, name) } satisfies Filter);
    } else {
      throw badQuery(`unrecognized query parameter '${name}'`);
    }
  }

  if (spec.fields) {
    const selected = new Set(spec.fields);
    if (spec.order?.some((o) => !selected.has(o.field.name)))
      throw badQuery('cannot order on un-selected fields');
    if (spec.filters.some((f) => !selected.has(f.field.name)))
      throw badQuery('cannot filter on un-selected fields');
  }
  if (!isCollection && spec.filters.length) throw badQuery('this is not a collection');
  return spec;
}
