// The configuration's conditions (core/config/master-config/step-common.ts says their forms)
// evaluated against a build's properties, where Buildbot calls doStepIf(step),
// hideStepIf(results, step) and, here too, alwaysRun.
import type { Condition } from '../../core/config/master-config.js';
import { truthy } from '../../core/interpolate.js';
import type { Properties } from './interpolate.js';

/** Equal as JSON values are (Python's == on decoded JSON, but for 1 == 1.0 and True == 1). */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether the condition holds; `results` is the step's own, once it has them. */
export function holds(c: Condition, props: Properties, results?: number): boolean {
  if (typeof c === 'boolean') return c;
  if ('not' in c) return !holds(c.not, props, results);
  if ('all' in c) return c.all.every((x) => holds(x, props, results));
  if ('any' in c) return c.any.some((x) => holds(x, props, results));
  if ('results' in c) return results !== undefined && c.results.includes(results);
  const has = Object.hasOwn(props, c.property);
  const v = has ? props[c.property]![0] : undefined;
  if (c.exists !== undefined) return has === c.exists;
  if (c.in !== undefined) return has && c.in.some((x) => same(x, v));
  if (c.equals !== undefined) return has && same(v, c.equals);
  return truthy(v);
}
