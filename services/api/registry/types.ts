// The field types of Buildbot's data API (services/core/entities/types.ts) as the read API
// meets them: how a query-string value is read for each type, and how each type describes
// itself in /application.spec.
import type { EntityField, FieldType } from '../../core/entities/types.js';
import { isUrlIdentifier } from '../../core/identifiers.js';

/** Values a filter compares against: what Buildbot's valueFromString yields. */
export type FilterValue = number | string | boolean;

const PY_INT = /^\s*[+-]?\d+(_\d+)*\s*$/;
// A Map, not an object: `__proto__` and `constructor` are words a client may send.
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['on', true],
  ['true', true],
  ['yes', true],
  ['1', true],
  ['off', false],
  ['false', false],
  ['no', false],
  ['0', false],
]);
// Every integer column is 32-bit; clamping to the 64-bit range keeps comparisons exact.
const INT8_MAX = 2n ** 63n - 1n;

/** Python's int(): surrounding spaces, a sign and digit-separating underscores are allowed. */
export function parsePyInt(s: string): bigint | null {
  if (!PY_INT.test(s)) return null;
  return BigInt(s.trim().replace(/_/g, ''));
}

/** Read a query-string value as the field's type, as Buildbot does; undefined when it cannot be. */
export function valueFromString(type: FieldType, raw: string): FilterValue | undefined {
  switch (type.kind) {
    case 'integer':
    case 'datetime': {
      const n = parsePyInt(raw);
      if (n === null) return undefined;
      const clamped = n > INT8_MAX ? INT8_MAX : n < -INT8_MAX ? -INT8_MAX : n;
      return Number(clamped) === Number(n) && Number.isSafeInteger(Number(n))
        ? Number(n)
        : clamped.toString();
    }
    case 'string':
      return raw;
    case 'identifier':
      if (!isUrlIdentifier(raw, type.len)) return undefined;
      return raw;
    case 'boolean': {
      return BOOLEANS.get(raw.toLowerCase());
    }
    case 'list':
      return valueFromString(type.of, raw);
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------- /application.spec

type Spec = Record<string, unknown>;

function typeName(type: FieldType): string {
  return type.kind === 'entity' ? type.name : type.kind;
}

export function typeSpec(type: FieldType, nullable = false): Spec {
  let spec: Spec;
  if (type.kind === 'list') spec = { of: typeSpec(type.of), type: 'list' };
  else if (type.kind === 'entity') spec = { fields: type.fields.map(fieldSpec), type: type.name };
  else spec = { name: type.kind };
  return nullable ? { can_be_null: true, ...spec } : spec;
}

export function fieldSpec(f: EntityField): Spec {
  return {
    name: f.name,
    type: f.nullable ? `${typeName(f.type)} or None` : typeName(f.type),
    type_spec: typeSpec(f.type, f.nullable),
  };
}
