// The source stamps and properties a trigger step gives each build set it adds, as Buildbot
// 3.7's Trigger (prepareSourcestampListForTrigger) and Triggerable
// (addBuildsetForSourceStampsWithDefaults) make them: the stamps the step chose, by codebase
// (`sourceStamps` as given, rendered; none with alwaysUseLatest; else this build's, each at
// its codebase's got_revision when updateSourceStamp, which is the default), laid over the
// triggered scheduler's codebases (a codebase nobody names gets its configured repository and
// branch, at no revision), then those of other codebases. A stamp of this build that keeps its
// revision is the same stamp (its changes with it).
import type { SchedulerConfig, StepConfig } from '../../../core/config/master-config.js';
import type { SourceStampSpec } from '../../../core/data/index.js';
import { codebasesOf, defaultStamp } from '../../schedulers/buildset.js';
import type { StepContext } from './step.js';

type TriggerStep = Extract<StepConfig, { type: 'trigger' }>;

/** The stamps the step chose, by codebase: a stamp of this build by id, or a new one. */
function chosen(c: StepContext<TriggerStep>, sched: SchedulerConfig): Map<string, number | SourceStampSpec> {
  const { step } = c;
  const out = new Map<string, number | SourceStampSpec>();
  if (step.sourceStamps) {
    const codebases = codebasesOf(sched);
    for (const ss of step.sourceStamps) {
      const base = defaultStamp(codebases, ss.codebase);
      const r = (
        v: Parameters<StepContext['render']>[0] | null | undefined,
        dflt: string | null | undefined,
      ) => (v === undefined ? (dflt ?? null) : v === null ? null : c.render(v));
      out.set(ss.codebase, {
        codebase: ss.codebase,
        repository: r(ss.repository, base.repository) ?? '',
        branch: r(ss.branch, base.branch),
        revision: r(ss.revision, null),
        project: r(ss.project, '') ?? '',
      });
    }
    return out;
  }
  if (step.alwaysUseLatest) return out;
  const update = step.updateSourceStamp ?? true;
  // Buildbot's got_revision: a string for one codebase (''), or a dict by codebase.
  const got = c.props.got_revision?.[0];
  const gotFor = (cb: string): unknown =>
    typeof got === 'object' && got !== null
      ? (got as Record<string, unknown>)[cb]
      : cb === ''
        ? got
        : undefined;
  for (const ss of c.build.sourcestamps) {
    const revision = update ? gotFor(ss.codebase) : undefined;
    out.set(
      ss.codebase,
      typeof revision === 'string' && revision !== ss.revision
        ? {
            codebase: ss.codebase,
            repository: ss.repository,
            branch: ss.branch,
            revision,
            project: ss.project,
          }
        : ss.ssid,
    );
  }
  return out;
}

/** The source stamps of the build set the step adds through `sched`. */
export function triggerStamps(
  c: StepContext<TriggerStep>,
  sched: SchedulerConfig,
): (number | SourceStampSpec)[] {
  const given = chosen(c, sched);
  const codebases = codebasesOf(sched);
  const own = Object.keys(codebases);
  return [
    ...own.map((cb) => given.get(cb) ?? defaultStamp(codebases, cb)),
    ...[...given.keys()]
      .filter((cb) => !own.includes(cb))
      .sort()
      .map((cb) => given.get(cb)!),
  ];
}

/** set_properties (rendered) and copy_properties (this build's values), each with source Trigger. */
export function triggerProperties(c: StepContext<TriggerStep>): Record<string, readonly [unknown, string]> {
  const { step } = c;
  const out: Record<string, readonly [unknown, string]> = {};
  // Redacted as every stored property is: the triggered build renders its own secrets.
  for (const [k, v] of Object.entries(step.set_properties))
    out[k] = [typeof v === 'string' ? c.build.redactor.clean(c.render(v)) : v, 'Trigger'];
  // Buildbot's copy_properties are Property(name): a property this build lacks is None.
  for (const k of step.copy_properties) out[k] = [c.props[k]?.[0] ?? null, 'Trigger'];
  return out;
}
