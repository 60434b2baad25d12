// What the retention configuration means for each builder: the horizon of each kind once
// the builder's own override, its tags' and the global value are weighed (pure logic, so it
// is tested apart: test/master/jobs/retention-plan.test.ts).
//
// - A builder's override wins; else the tags' overrides that set the key, the longest of them
//   (`forever` longest of all: keeping is the safe side of a conflict); else the global value.
// - A build past build_horizon goes whole, so its logs, artifacts and build data go with it:
//   each of their horizons is at most the build horizon.
import {
  horizonSeconds,
  type RetentionConfig,
  type RetentionRules,
} from '../../core/config/master-config/retention.js';

/** Seconds each kind is kept on one builder (null: forever); maxBuilds null: no maximum. */
export interface BuilderPlan {
  builderid: number;
  logs: number | null;
  artifacts: number | null;
  buildData: number | null;
  builds: number | null;
  maxBuilds: number | null;
}

type Key = keyof RetentionRules;

const longest = (values: (number | null)[]): number | null =>
  values.includes(null) ? null : Math.max(...(values as number[]));

const shortest = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

function resolve(config: RetentionConfig, name: string, tags: readonly string[], key: Key): number | null {
  const value = (r: RetentionRules | undefined): number | null | undefined => {
    const v = r?.[key];
    if (v === undefined) return undefined;
    if (key === 'max_builds') return v === 'forever' ? null : (v as number);
    return horizonSeconds(v);
  };
  const own = value(config.builders[name]);
  if (own !== undefined) return own;
  const tagged = tags.map((t) => value(config.tags[t])).filter((v): v is number | null => v !== undefined);
  if (tagged.length > 0) return longest(tagged);
  return value(config) ?? null;
}

export function builderPlan(
  config: RetentionConfig,
  builder: { id: number; name: string; tags: readonly string[] },
): BuilderPlan {
  const r = (key: Key) => resolve(config, builder.name, builder.tags, key);
  const builds = r('build_horizon');
  return {
    builderid: builder.id,
    builds,
    logs: shortest(r('logHorizon'), builds),
    artifacts: shortest(r('artifact_horizon'), builds),
    buildData: shortest(r('build_data_horizon'), builds),
    maxBuilds: r('max_builds'),
  };
}

/** Whether a plan deletes anything at all (a builder whose plan does not is not looked at). */
export const plansAnything = (p: BuilderPlan): boolean =>
  p.logs !== null ||
  p.artifacts !== null ||
  p.buildData !== null ||
  p.builds !== null ||
  p.maxBuilds !== null;

/** The `before` of a BuildSelection for a horizon at `now` (seconds): 0 selects nothing by age. */
export const cutoff = (horizonS: number | null, now: number): number =>
  horizonS === null ? 0 : now - horizonS;
