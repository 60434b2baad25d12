// Force-form parameters as Buildbot's ForceScheduler models them: each kind with its
// defaults, its place in a nest (which decides its fullName, the key a force request uses),
// and its description for /forceschedulers. Validation of submitted values lives beside it.
import type { ForceFieldSpec, ForceSchedulerSpec } from '../api-shapes.js';
import type { ForceParameterConfig, ForceSchedulerConfig } from '../config/master-config.js';

export type ParamKind = 'fixed' | 'text' | 'textarea' | 'int' | 'bool' | 'username' | 'list' | 'nested';

export interface Parameter {
  kind: ParamKind;
  name: string;
  /** Set when the parameter sits in a named nest; decides fullName. */
  parentName: string | null;
  label: string;
  tablabel: string;
  default: unknown;
  required: boolean;
  multiple: boolean;
  regex: string | null;
  hide: boolean;
  maxsize: number | null;
  autopopulate: unknown;
  /** Kind-specific attributes, exactly as Buildbot lists them in the spec. */
  extra: Record<string, unknown>;
  fields: Parameter[];
  /** For a codebase nest: the codebase it fills. */
  codebase?: string;
}

export function fullName(p: Parameter): string | null {
  if (p.parentName && p.name) return `${p.parentName}_${p.name}`;
  return p.name || p.parentName;
}

const KIND: Record<ForceParameterConfig['type'], ParamKind> = {
  fixed: 'fixed',
  string: 'text',
  text: 'textarea',
  int: 'int',
  boolean: 'bool',
  username: 'username',
  choice: 'list',
  nested: 'nested',
};

function make(
  kind: ParamKind,
  name: string,
  o: Record<string, unknown>,
  fields: Parameter[] = [],
): Parameter {
  const label = (o.label as string | undefined) ?? name;
  const p: Parameter = {
    kind,
    name,
    parentName: null,
    label,
    tablabel: (o.tablabel as string | undefined) ?? label,
    default: o.default,
    required: (o.required as boolean | undefined) ?? false,
    multiple: (o.multiple as boolean | undefined) ?? false,
    regex: (o.regex as string | undefined) ?? null,
    hide: (o.hide as boolean | undefined) ?? kind === 'fixed',
    maxsize: (o.maxsize as number | undefined) ?? null,
    autopopulate: o.autopopulate ?? null,
    extra: {},
    fields,
  };
  switch (kind) {
    case 'text':
      p.default ??= '';
      p.extra = { size: o.size ?? 10 };
      break;
    case 'textarea':
      p.default ??= '';
      p.extra = { size: o.size ?? 10, cols: o.cols ?? 80, rows: o.rows ?? 20 };
      break;
    case 'int':
      p.default ??= 0;
      p.extra = { size: o.size ?? 10 };
      break;
    case 'username':
      p.default ??= '';
      p.extra = { size: o.size ?? 30, need_email: o.need_email ?? true };
      break;
    case 'list':
      p.default ??= '';
      p.extra = { choices: o.choices ?? [], strict: o.strict ?? true };
      break;
    case 'nested': {
      const visible = fields.filter((f) => !f.hide).length;
      p.default ??= '';
      p.extra = { layout: o.layout ?? 'vertical', columns: o.columns ?? (visible >= 4 ? 2 : 1) };
      break;
    }
    default:
      // fixed, bool: Buildbot's BaseParameter default is the empty string.
      p.default ??= '';
  }
  return p;
}

function setParent(p: Parameter, parent: Parameter | null): void {
  p.parentName = parent ? fullName(parent) : null;
  for (const f of p.fields) setParent(f, p);
}

export function fromConfig(c: ForceParameterConfig): Parameter {
  const o = c as Record<string, unknown>;
  if (c.type === 'nested') {
    const nest = make(
      'nested',
      String(o.name ?? ''),
      o,
      (o.fields as ForceParameterConfig[]).map(fromConfig),
    );
    setParent(nest, null);
    return nest;
  }
  if (c.type === 'username') {
    return make('username', String(o.name ?? 'username'), { label: 'Your name:', ...o });
  }
  return make(KIND[c.type], String(o.name), o);
}

type CodebaseConfig = NonNullable<ForceSchedulerConfig['codebases']>[number];

function codebase(c: CodebaseConfig): Parameter {
  const o = typeof c === 'string' ? { codebase: c } : c;
  const cb = o.codebase ?? '';
  const fields: Parameter[] = [];
  for (const key of ['branch', 'project', 'repository', 'revision'] as const) {
    const v = (o as Record<string, unknown>)[key];
    if (v === null) continue;
    if (v === undefined)
      fields.push(make('text', key, { label: `${key[0]!.toUpperCase()}${key.slice(1)}:` }));
    else if (typeof v === 'string') fields.push(make('fixed', key, { default: v }));
    else fields.push(fromConfig(v as ForceParameterConfig));
  }
  const label = o.label ?? (cb ? `Codebase: ${cb}` : cb);
  const nest = make('nested', cb, { label, hide: o.hide, columns: o.columns }, fields);
  nest.codebase = cb;
  setParent(nest, null);
  return nest;
}

export interface ForceScheduler {
  name: string;
  builderNames: string[];
  label: string;
  buttonName: string;
  reason: Parameter;
  username: Parameter;
  reasonString: string;
  codebases: Parameter[];
  properties: Parameter[];
  /** Every form field in Buildbot's order: [username, reason] nest, codebases, properties. */
  allFields: Parameter[];
}

export function forceScheduler(c: ForceSchedulerConfig): ForceScheduler {
  const reason = c.reason
    ? fromConfig(c.reason)
    : make('text', 'reason', { default: 'force build', size: 20 });
  const username = c.username
    ? fromConfig(c.username)
    : make('username', 'username', { label: 'Your name:' });
  const codebases = (c.codebases ?? ['']).map(codebase);
  const properties = c.properties.map(fromConfig);
  const head = make('nested', '', {}, [username, reason]);
  setParent(head, null);
  for (const p of properties) setParent(p, null);
  return {
    name: c.name,
    builderNames: c.builders,
    label: c.label ?? c.name,
    buttonName: c.button_name ?? c.name,
    reason,
    username,
    reasonString: c.reason_string ?? "A build was forced by '%(owner)s': %(reason)s",
    codebases,
    properties,
    allFields: [head, ...codebases, ...properties],
  };
}

/** A parameter as Buildbot's getSpec() describes it. Its regex shows as null, as Buildbot's does. */
export function parameterSpec(p: Parameter): ForceFieldSpec {
  const spec: ForceFieldSpec = {
    name: p.name,
    fullName: fullName(p),
    label: p.label,
    tablabel: p.tablabel,
    type: p.kind,
    default: p.default,
    required: p.required,
    multiple: p.multiple,
    regex: null,
    hide: p.hide,
    maxsize: p.maxsize,
    autopopulate: p.autopopulate,
    ...p.extra,
  };
  if (p.kind === 'nested') spec.fields = p.fields.map(parameterSpec);
  return spec;
}

/** The REST shape of a force scheduler (GET /forceschedulers). */
export function forceSchedulerSpec(f: ForceScheduler): ForceSchedulerSpec {
  return {
    name: f.name,
    button_name: f.buttonName,
    label: f.label,
    builder_names: f.builderNames,
    enabled: true,
    all_fields: f.allFields.map(parameterSpec),
  };
}
