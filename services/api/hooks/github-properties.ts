// The payload fields a GitHub hook adds to its changes' properties (Buildbot's
// github_property_whitelist, PullRequestMixin.extractProperties): every field not an object,
// named `github.<path>` with dots, is a property when the name matches one of the patterns
// (fnmatch); objects are walked. No pattern, no property.
import { fnmatch } from '../../core/auth/fnmatch.js';
import { isObject, type Json } from './payload.js';

export function whitelistedProperties(payload: Json, patterns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (patterns.length === 0) return out;
  const walk = (base: string, o: Json) => {
    for (const [k, v] of Object.entries(o)) {
      const name = `${base}.${k}`;
      if (isObject(v)) walk(name, v);
      else if (patterns.some((p) => fnmatch(name, p))) out[name] = v;
    }
  };
  walk('github', payload);
  return out;
}
