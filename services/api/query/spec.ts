// A parsed read request: Buildbot's ResultSpec.
import type { Field } from '../../core/entities/field.js';
import type { FilterValue } from '../registry/types.js';

export type Operator = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'contains' | 'in' | 'notin';

export const SINGULAR_OPERATORS: readonly Operator[] = [
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'contains',
  'in',
  'notin',
];
export const PLURAL_OPERATORS: readonly Operator[] = ['eq', 'ne', 'contains', 'in', 'notin'];

export interface Filter {
  field: Field;
  op: Operator;
  values: FilterValue[];
}

export interface OrderTerm {
  field: Field;
  desc: boolean;
}

export interface ResultSpec {
  /** Selected field names, or null for every field. */
  fields: string[] | null;
  filters: Filter[];
  /** Requested order, or null for the resource's default. */
  order: OrderTerm[] | null;
  limit: number | null;
  offset: number | null;
  /** Values of `property` parameters (`*` means all), or null when none was given. */
  properties: string[] | null;
}
