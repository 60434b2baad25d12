// Rendering a step's templates for one build (the syntax and its rules: core/interpolate.ts):
// properties as the step starts, the build's source stamps by codebase, the worker's info,
// a template's own keywords, and secrets from the master's providers, each secret used
// recorded with the build's Redactor so that no log line shows it.
import type { Renderable } from '../../core/config/master-config.js';
import type { SourceStampFacts } from '../../core/data/index.js';
import { InterpolationError, type Part, parse, renderParts } from '../../core/interpolate.js';
import type { SecretsProvider } from '../secrets.js';
import type { Redactor } from './redact.js';

export type Properties = Record<string, readonly [unknown, string]>;

export interface RenderScope {
  props: Properties;
  sourcestamps: readonly SourceStampFacts[];
  worker: Readonly<Record<string, unknown>>;
  secrets: SecretsProvider;
  redactor: Redactor;
}

// The configuration's templates are few and rendered often: each is parsed once.
const parsed = new Map<string, Part[]>();
function partsOf(template: string): Part[] {
  let p = parsed.get(template);
  if (!p) {
    p = parse(template);
    parsed.set(template, p);
  }
  return p;
}

const SOURCE_ATTRS = new Set(['branch', 'revision', 'repository', 'project', 'codebase']);

/** A template (or `{interpolate, kw}`) with the build's values filled in. */
export function render(r: Renderable, s: RenderScope): string {
  const template = typeof r === 'string' ? r : r.interpolate;
  const kw = typeof r === 'string' ? {} : r.kw;
  const has = (o: Readonly<Record<string, unknown>>, k: string) =>
    Object.hasOwn(o, k) ? { value: o[k] } : undefined;
  return renderParts(partsOf(template), {
    prop: (name) => (Object.hasOwn(s.props, name) ? { value: s.props[name]![0] } : undefined),
    src: (codebase, attr) => {
      const ss = s.sourcestamps.find((x) => x.codebase === codebase);
      return ss && SOURCE_ATTRS.has(attr) ? { value: ss[attr as keyof SourceStampFacts] } : undefined;
    },
    kw: (name) => has(kw, name),
    worker: (name) => has(s.worker, name),
    secret: (name) => {
      const v = s.secrets.get(name);
      if (v === undefined) throw new InterpolationError(`secret key ${name} is not found in any provider`);
      s.redactor.use(v, name);
      return v;
    },
  });
}

/**
 * A template over a build's properties alone (what reporters' templates see, as Buildbot
 * renders them against a build's properties): src, kw and worker render empty; a secret,
 * which no report may carry, cannot render (InterpolationError).
 */
export function interpolate(template: string, props: Properties): string {
  return renderParts(partsOf(template), {
    prop: (name) => (Object.hasOwn(props, name) ? { value: props[name]![0] } : undefined),
    src: () => undefined,
    kw: () => undefined,
    worker: () => undefined,
    secret: (name) => {
      throw new InterpolationError(`secret ${name} cannot be rendered in a report`);
    },
  });
}
