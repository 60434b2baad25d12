// A force request checked against its scheduler's form, as Buildbot's ForceScheduler.force
// does: every field read from the parameters by its fullName (defaults filled in, values
// validated), errors collected per field, then the build set's reason, owner, properties and
// source stamps.

import { pyRepr } from '../python.js';
import { type ForceScheduler, fullName, type Parameter } from './parameters.js';

// Buildbot's VALID_EMAIL_ADDR (reporters/mail.py).
const EMAIL = /(?:\S+@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+\.?)/;
const PY_INT = /^\s*[+-]?\d+(_\d+)*\s*$/;

class FieldError extends Error {}

export interface ForcedBuild {
  reason: string;
  owner: string;
  /** name -> [value, source] */
  properties: Record<string, [unknown, string]>;
  sourcestamps: {
    codebase: string;
    branch: string | null;
    revision: string | null;
    repository: string;
    project: string;
  }[];
}

export type ForceOutcome = { ok: true; build: ForcedBuild } | { ok: false; errors: Record<string, string> };

type Kwargs = Map<string, unknown[]>;

function parseOne(p: Parameter, s: unknown): unknown {
  switch (p.kind) {
    case 'int': {
      if (typeof s === 'number' || typeof s === 'boolean') return Math.trunc(Number(s));
      if (typeof s === 'string' && PY_INT.test(s)) return Number(s.trim().replace(/_/g, ''));
      throw new FieldError(`invalid literal for int() with base 10: ${pyRepr(s)}`);
    }
    case 'username': {
      const v = String(s ?? '');
      if (!v && !p.required) return v;
      if (p.extra.need_email && !EMAIL.test(v)) {
        throw new FieldError(`${p.name}: please fill in email address in the form 'User <email@email.com>'`);
      }
      return v;
    }
    case 'list': {
      const choices = p.extra.choices as string[];
      if (p.extra.strict && !choices.includes(s as string)) {
        throw new FieldError(
          `${pyRepr(s)} does not belong to list of available choices '${pyRepr(choices)}'`,
        );
      }
      return s;
    }
    default:
      return s;
  }
}

/** BaseParameter.getFromKwargs: the value of one field. */
function fieldValue(p: Parameter, kwargs: Kwargs): unknown {
  const key = fullName(p) ?? '';
  if (p.kind === 'bool') {
    const v = kwargs.get(key);
    return v === undefined ? p.default === true : v.length === 1 && v[0] === true;
  }
  if (p.kind === 'fixed') return p.default;
  let args = (kwargs.get(key) ?? []).filter((a) => !(typeof a === 'string' && a.trim() === ''));
  if (args.length === 0) {
    if (p.required) throw new FieldError(`'${p.label}' needs to be specified`);
    args = p.multiple ? (Array.isArray(p.default) ? p.default : [p.default]) : [p.default];
  }
  if (p.regex) {
    const re = new RegExp(p.regex);
    for (const a of args) {
      if (typeof a !== 'string' || !re.test(a))
        throw new FieldError(`${p.label}:'${a}' does not match pattern '${p.regex}'`);
    }
  }
  if (p.maxsize !== null) {
    for (const a of args) {
      const len = String(a).length;
      if (len > p.maxsize) throw new FieldError(`${p.label}: is too large ${len} > ${p.maxsize}`);
    }
  }
  const value = p.multiple ? args.map((a) => parseOne(p, a)) : parseOne(p, args[0]);
  if (value === null || value === undefined)
    throw new FieldError(`need ${key}: no default provided by config`);
  return value;
}

/** What a force call may name besides the form's fields: which builders, and who asks. */
const CALL_PARAMS = ['builderNames', 'builderid', 'owner'];

function fieldNames(fields: readonly Parameter[], into: Set<string>): Set<string> {
  for (const p of fields) {
    if (p.kind === 'nested') fieldNames(p.fields, into);
    else into.add(fullName(p) ?? '');
  }
  return into;
}

/**
 * Parameters that are no field of the scheduler's form, each with why it is refused.
 * Buildbot ignores them; a caller that misspells a property would then start a build
 * without it, and a parameter that means nothing here must not look accepted.
 */
export function unknownParameters(
  sched: ForceScheduler,
  params: Record<string, unknown>,
): Record<string, string> {
  const known = fieldNames(sched.allFields, new Set(CALL_PARAMS));
  const errors: Record<string, string> = {};
  for (const k of Object.keys(params)) if (!known.has(k)) errors[k] = 'no such field in this force form';
  return errors;
}

export function checkForce(
  sched: ForceScheduler,
  params: Record<string, unknown>,
  owner: string | null,
): ForceOutcome {
  const kwargs: Kwargs = new Map(
    Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? [...v] : [v]]),
  );
  const errors: Record<string, string> = {};
  const collect = <T>(p: Parameter, fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      errors[fullName(p) ?? ''] = err.message;
      return undefined;
    }
  };

  const reason = collect(sched.reason, () => fieldValue(sched.reason, kwargs));
  let who = owner;
  if (who === null || who === 'anonymous')
    who = collect(sched.username, () => fieldValue(sched.username, kwargs)) as string;

  const properties: Record<string, [unknown, string]> = {};
  const stamps = new Map<string, Record<string, unknown>>();
  const gather = (p: Parameter, into: Record<string, unknown>) => {
    if (p.kind === 'nested') {
      const child: Record<string, unknown> = {};
      for (const f of p.fields) gather(f, child);
      if (p.codebase !== undefined) stamps.set(p.codebase, child);
      else if (p.name) into[p.name] = { ...((into[p.name] as object) ?? {}), ...child };
      else Object.assign(into, child);
      return;
    }
    const v = collect(p, () => fieldValue(p, kwargs));
    if (v !== undefined) into[p.name] = v;
  };
  const props: Record<string, unknown> = {};
  for (const p of [...sched.codebases, ...sched.properties]) gather(p, props);
  if (Object.keys(errors).length) return { ok: false, errors };

  for (const [k, v] of Object.entries(props)) properties[k] = [v, 'Force Build Form'];
  properties.reason = [reason, 'Force Build Form'];
  properties.owner = [who, 'Force Build Form'];
  properties.scheduler = [sched.name, 'Scheduler'];
  const text = sched.reasonString.replace(/%\((owner|reason)\)s/g, (_m, k: string) =>
    String(k === 'owner' ? who : reason),
  );
  const sourcestamps = [...stamps.entries()].map(([codebase, ss]) => ({
    codebase,
    branch: (ss.branch as string | undefined) ?? '',
    revision: (ss.revision as string | undefined) ?? '',
    repository: (ss.repository as string | undefined) ?? '',
    project: (ss.project as string | undefined) ?? '',
  }));
  return { ok: true, build: { reason: text, owner: who ?? '', properties, sourcestamps } };
}
