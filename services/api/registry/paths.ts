// Path patterns in Buildbot's own syntax (`builders/n:builderid/builds`): `n:` is a number,
// `i:` an identifier, `s:` any string (Buildbot 4.1's builder names, which may hold spaces)
// and a bare `:` any segment. Patterns of the same length are tried in
// registration order, which is Buildbot's, so the same path picks the same endpoint.
// Unlike Buildbot (Python's int()), `n:` accepts only plain digits: /builds/+1 and
// /builds/1_0 name no build, and neither does a number beyond 32 bits.
import { idOfSegment, isUrlIdentifier } from '../../core/identifiers.js';
import type { Endpoint, PathArgs } from './model.js';

type Element = { literal: string } | { param: string; kind: 'n' | 'i' | 'any' };

/** `s:` takes any non-empty segment, as a bare `:` does. */
const KINDS: Readonly<Record<string, 'n' | 'i' | 'any'>> = { n: 'n', i: 'i', s: 'any' };

interface Compiled {
  endpoint: Endpoint;
  elements: Element[];
}

export interface Match {
  endpoint: Endpoint;
  args: PathArgs;
}

function compile(pattern: string): Element[] {
  if (pattern === '') return [];
  return pattern.split('/').map((part) => {
    const m = /^(n|i|s)?:([a-z0-9_.]+)$/.exec(part);
    if (!m) return { literal: part };
    return { param: m[2]!, kind: m[1] ? KINDS[m[1]]! : 'any' };
  });
}

export class PathMatcher {
  private readonly byLength = new Map<number, Compiled[]>();

  constructor(endpoints: readonly Endpoint[]) {
    for (const endpoint of endpoints) {
      const elements = compile(endpoint.pattern);
      const list = this.byLength.get(elements.length) ?? [];
      list.push({ endpoint, elements });
      this.byLength.set(elements.length, list);
    }
  }

  /** Segments are already percent-decoded. */
  match(segments: readonly string[]): Match | null {
    // No name or id holds a NUL byte (PostgreSQL text cannot).
    if (segments.some((s) => s.includes('\0'))) return null;
    for (const c of this.byLength.get(segments.length) ?? []) {
      const args: Record<string, number | string> = {};
      let ok = true;
      for (let i = 0; i < c.elements.length && ok; i++) {
        const el = c.elements[i]!;
        const seg = segments[i]!;
        if ('literal' in el) ok = el.literal === seg;
        else if (el.kind === 'n') {
          const id = idOfSegment(seg);
          ok = id !== null;
          if (ok) args[el.param] = id!;
        } else if (el.kind === 'i') {
          ok = isUrlIdentifier(seg);
          if (ok) args[el.param] = seg;
        } else {
          ok = seg !== '';
          if (ok) args[el.param] = seg;
        }
      }
      if (ok) return { endpoint: c.endpoint, args };
    }
    return null;
  }
}
