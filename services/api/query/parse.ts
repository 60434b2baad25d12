// Query string -> ResultSpec, with Buildbot's rules and messages. Where Buildbot silently
// ignores a parameter it cannot apply (an unknown operator, an operator that takes one value
// given several) or fails with a database error (a negative limit), we answer 400.

import type { Field } from '../../core/entities/field.js';
import { invalidQuery } from '../errors/catalogue.js';
import { type FilterValue, parsePyInt, valueFromString } from '../registry/types.js';
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
  if (n === null) throw invalidQuery(`invalid ${what}`);
  if (n < 0n) throw invalidQuery(`${what} must not be negative`);
  if (n > MAX_PAGE) throw invalidQuery(`${what} is too large`);
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
    if (!f) throw invalidQuery(`no such field '${name}'`);
    return f;
  };
  const convert = (f: Field, raw: string[], param: string) => {
    // PostgreSQL text cannot hold a NUL byte, so no stored value can equal or contain one.
    if (raw.some((v) => v.includes('\0'))) throw invalidQuery(`invalid filter value for ${param}`);
    return raw.map((v): FilterValue => {
      const value = valueFromString(f.type, v);
      if (value === undefined) throw invalidQuery(`invalid filter value for ${param}`);
      return value;
    });
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
      if (values.some((v) => v.includes('\0'))) throw invalidQuery(`invalid property value for ${name}`);
      spec.properties = [...(spec.properties ?? []), ...values];
    } else if (byName.has(name)) {
      const f = byName.get(name)!;
      spec.filters.push({ field: f, op: 'eq', values: convert(f, values, name) });
    } else if (name.includes('__')) {
      const cut = name.lastIndexOf('__');
      const fieldName = name.slice(0, cut);
      const op = name.slice(cut + 2) as Operator;
      const f = byName.get(fieldName);
      if (!f) throw invalidQuery(`unrecognized query parameter '${name}'`);
      if (!SINGULAR_OPERATORS.includes(op)) {
        throw invalidQuery(
          `unknown filter operator '${op}' in '${name}' (use ${SINGULAR_OPERATORS.join(', ')})`,
        );
      }
      if (values.length > 1 && !PLURAL_OPERATORS.includes(op)) {
        throw invalidQuery(`operator '${op}' takes one value, '${name}' was given ${values.length}`);
      }
      spec.filters.push({ field: f, op, values: convert(f, values, name) } satisfies Filter);
    } else {
      throw invalidQuery(`unrecognized query parameter '${name}'`);
    }
  }

  if (spec.fields) {
    const selected = new Set(spec.fields);
    if (spec.order?.some((o) => !selected.has(o.field.name)))
      throw invalidQuery('cannot order on un-selected fields');
    if (spec.filters.some((f) => !selected.has(f.field.name)))
      throw invalidQuery('cannot filter on un-selected fields');
  }
  if (!isCollection && spec.filters.length) throw invalidQuery('this is not a collection');
  return spec;
}
