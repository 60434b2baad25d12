// The secret names a builder's templates hold (`%(secret:NAME)s`, in any string of its
// configuration, nested substitutions included), so that providers that are read ahead
// (pass, Vault) read them as its build starts. Names are literal in Buildbot's syntax, so
// the configuration says them all.
import type { BuilderConfig } from '../../core/config/master-config.js';
import { type Part, parse } from '../../core/interpolate.js';

function namesIn(parts: readonly Part[], out: Set<string>): void {
  for (const p of parts) {
    if (typeof p === 'string') continue;
    if (p.selector === 'secret') out.add(p.key);
    namesIn(p.arg, out);
    namesIn(p.otherwise, out);
  }
}

const cache = new WeakMap<BuilderConfig, string[]>();

export function secretNames(builder: BuilderConfig): string[] {
  let names = cache.get(builder);
  if (names) return names;
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!v.includes('%(secret:')) return;
      try {
        namesIn(parse(v), out);
      } catch {
        // Not a template the configuration check let through: nothing to read for it.
      }
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  walk(builder);
  names = [...out];
  cache.set(builder, names);
  return names;
}
