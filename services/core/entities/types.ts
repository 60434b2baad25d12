// The field types of Buildbot's data API (buildbot/data/types.py): what each field of an
// entity holds. The read API reads query-string values and writes /application.spec from
// them (services/api/registry/types.ts).

export type FieldType =
  | { kind: 'integer' }
  | { kind: 'datetime' }
  | { kind: 'string' }
  | { kind: 'identifier'; len: number }
  | { kind: 'boolean' }
  | { kind: 'binary' }
  | { kind: 'jsonobject' }
  | { kind: 'sourcedproperties' }
  | { kind: 'list'; of: FieldType }
  | { kind: 'entity'; name: string; fields: readonly EntityField[] };

export interface EntityField {
  name: string;
  type: FieldType;
  nullable?: boolean;
}

export const t = {
  integer: { kind: 'integer' } as FieldType,
  datetime: { kind: 'datetime' } as FieldType,
  string: { kind: 'string' } as FieldType,
  identifier: (len = 50): FieldType => ({ kind: 'identifier', len }),
  boolean: { kind: 'boolean' } as FieldType,
  binary: { kind: 'binary' } as FieldType,
  jsonobject: { kind: 'jsonobject' } as FieldType,
  sourcedproperties: { kind: 'sourcedproperties' } as FieldType,
  list: (of: FieldType): FieldType => ({ kind: 'list', of }),
  entity: (name: string, fields: readonly EntityField[]): FieldType => ({ kind: 'entity', name, fields }),
};

/** Scalar types can be compared, sorted and filtered with every operator. */
export function isScalar(type: FieldType): boolean {
  return ['integer', 'datetime', 'string', 'identifier', 'boolean'].includes(type.kind);
}
