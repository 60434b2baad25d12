// How long the cluster keeps what its builds leave behind (docs/retention.md). Nothing set,
// everything is kept forever, as before this section existed.
//
// Buildbot's JanitorConfigurator takes `logHorizon` (log chunks of steps older than it are
// deleted, the log marked type 'd') and `build_data_horizon` (build_data of builds finished
// before it); both names are accepted here with the same meaning. Flotilla adds horizons
// for artifacts, whole builds, changes and finished requests, a maximum count of builds
// per builder, and overrides per builder and per tag (which Buildbot users asked for in
// buildbot/buildbot#4328).
//
// A horizon is seconds (a number) or a string with a unit: `90s`, `30m`, `12h`, `30d`, `8w`;
// `forever` keeps (useful in an override, to keep one builder's builds whatever the global
// horizon says).
import { z } from 'zod';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** A horizon in seconds, or null for `forever`. */
export const horizon = z.union([
  z.number().int().positive(),
  z
    .string()
    .regex(/^(forever|\d+[smhdw])$/, 'expected seconds, a number with a unit (s, m, h, d, w), or "forever"'),
]);

export type Horizon = z.infer<typeof horizon>;

/** Seconds of a configured horizon; null for `forever` or not configured. */
export function horizonSeconds(h: Horizon | undefined): number | null {
  if (h === undefined || h === 'forever') return null;
  if (typeof h === 'number') return h;
  const n = Number(h.slice(0, -1));
  return n * UNIT_SECONDS[h.slice(-1)]!;
}

// What may differ per builder or per tag: the kinds that belong to a build.
const perBuilder = z
  .object({
    // Logs of builds finished longer ago than this read as deleted (type 'd', no lines).
    logHorizon: horizon.optional(),
    // Artifacts (uploads) of builds finished longer ago are deleted, their bytes with them.
    artifact_horizon: horizon.optional(),
    // build_data of builds finished longer ago is deleted (Buildbot's build_data_horizon).
    build_data_horizon: horizon.optional(),
    // Builds finished longer ago are deleted whole: steps, logs, properties, build data,
    // artifacts. Their logs and artifacts go first, whatever their own horizons say.
    build_horizon: horizon.optional(),
    // At most this many builds are kept per builder (the newest, by number); the older ones,
    // once finished, are deleted like builds past build_horizon. 0 is refused: use a horizon.
    max_builds: z.union([z.number().int().positive(), z.literal('forever')]).optional(),
  })
  .strict();

export type RetentionRules = z.infer<typeof perBuilder>;

export const retention = perBuilder
  .extend({
    // Changes (with their files, properties and users) older than this are deleted.
    change_horizon: horizon.optional(),
    // Complete build requests finished longer ago, and no longer referred to by a build, are
    // deleted; so are complete build sets with no request left.
    request_horizon: horizon.optional(),
    // Audit log rows (control actions, services/core/data/audit.ts) older than this are
    // deleted. Unset, the audit log is kept forever, as everything else here: a row is a few
    // hundred bytes and control actions are few, and who stopped a build a year ago is a
    // question people ask; docs/retention.md gives a figure to choose a horizon from.
    audit_horizon: horizon.optional(),
    // Overrides by builder name; they win over the tags' and the global values.
    builders: z.record(z.string().min(1), perBuilder).default({}),
    // Overrides by tag; a builder with several tagged overrides keeps the longest of each.
    tags: z.record(z.string().min(1), perBuilder).default({}),
    // How often the cleanup runs across the cluster (once per period, on one master).
    period_seconds: z.number().int().positive().default(3600),
    // Rows one statement deletes at most (log chunks, logs, build data, requests, changes);
    // builds go ten times fewer a statement (each takes its steps and logs with it) and
    // artifacts at most 10 (each may be a large object of many pages).
    batch_size: z.number().int().min(10).max(100_000).default(1000),
    // A run stops after this many seconds, even with work left; the next period goes on.
    max_run_seconds: z.number().int().positive().default(300),
  })
  .strict();

export type RetentionConfig = z.infer<typeof retention>;
