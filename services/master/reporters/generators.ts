// Report generators (buildbot/reporters/generators/): which events become reports, and with
// which formatter. As Buildbot's:
// - build_status: a build's end (and its start with report_new), for the builds whose results
//   its mode asks for; `change` and `problem` compare with the builder's previous build.
// - build_start_end: a build's start and end, whatever the results.
// - build_request: a request's creation (pending) and its cancellation.
// Each filters on builders, tags, schedulers (the `scheduler` property) and branches (the
// `branch` property), and adds the source stamps' patches when add_patch.
import type { GeneratorConfig, ReportMode } from '../../core/config/master-config.js';
import { RESULT_NAMES, Results } from '../../core/results.js';
import type { ReportEventKind } from './events.js';
import { createFormatter, type Formatter, message, renderable } from './formatters.js';
import type { BuildDict, Report } from './report.js';

const ALL_MODES: ReportMode[] = ['failing', 'passing', 'warnings', 'exception', 'cancelled'];

export interface Needs {
  steps: boolean;
  logs: boolean;
  previousBuild: boolean;
}

export interface ReportSettings {
  /** The configuration's title. */
  title: string;
  buildbotURL: string;
  /** Who the build concerns (its blamelist); empty for a request. */
  users: string[];
}

export interface Generator {
  wants(kind: ReportEventKind): boolean;
  needs(kind: ReportEventKind): Needs;
  /** The report for this event, or null when the generator has nothing to say about it. */
  generate(kind: ReportEventKind, build: BuildDict, settings: ReportSettings): Report | null;
}

function neededByProps(g: GeneratorConfig, build: BuildDict): boolean {
  const prop = (name: string) => build.properties[name]?.[0];
  if (g.builders && !g.builders.includes(build.builder.name)) return false;
  if (g.schedulers && !g.schedulers.includes(prop('scheduler') as string)) return false;
  if (g.branches && !g.branches.includes(prop('branch') as string)) return false;
  if (g.tags && !g.tags.some((t) => build.builder.tags.includes(t))) return false;
  return true;
}

/** Buildbot's is_message_needed_by_results. */
export function neededByResults(mode: readonly ReportMode[], build: BuildDict): boolean {
  const r = build.results;
  const prev = build.prev_build;
  if (mode.includes('change') && prev && prev.results !== r) return true;
  if (mode.includes('failing') && r === Results.FAILURE) return true;
  if (mode.includes('passing') && r === Results.SUCCESS) return true;
  if (mode.includes('problem') && r === Results.FAILURE && prev && prev.results !== Results.FAILURE)
    return true;
  if (mode.includes('warnings') && r === Results.WARNINGS) return true;
  if (mode.includes('exception') && r === Results.EXCEPTION) return true;
  if (mode.includes('cancelled') && r === Results.CANCELLED) return true;
  return false;
}

const patches = (g: GeneratorConfig, build: BuildDict) =>
  g.add_patch ? build.buildset.sourcestamps.flatMap((ss) => (ss.patch ? [ss.patch] : [])) : [];

function report(
  g: GeneratorConfig,
  f: Formatter,
  build: BuildDict,
  s: ReportSettings,
  mode: ReportMode[],
  isBuildset: boolean,
  defaultSubject: string | null,
): Report {
  const users = isBuildset ? [] : s.users;
  const msg = f.format(build, { title: s.title, buildbotURL: s.buildbotURL, mode, users, isBuildset });
  return {
    ...msg,
    subject: msg.subject ?? defaultSubject,
    results: build.results,
    builds: [build],
    users,
    patches: patches(g, build),
  };
}

function needs(f: Formatter, previousBuild = false): Needs {
  return { steps: f.wantSteps || f.wantLogs, logs: f.wantLogs, previousBuild };
}

export function createGenerator(g: GeneratorConfig): Generator {
  switch (g.type) {
    case 'build_status': {
      const f = createFormatter(g.message_formatter ?? message('plain'));
      const compares = g.mode.includes('change') || g.mode.includes('problem');
      return {
        wants: (k) => k === 'build-finished' || (g.report_new && k === 'build-new'),
        needs: (k) => needs(f, k === 'build-finished' && compares),
        generate(kind, build, s) {
          if (!neededByProps(g, build)) return null;
          if (kind !== 'build-new' && !neededByResults(g.mode, build)) return null;
          const result =
            build.results === null ? 'not finished' : (RESULT_NAMES[build.results] ?? 'Invalid status');
          return report(
            g,
            f,
            build,
            s,
            g.mode,
            false,
            `Flotilla ${result} in ${s.title} on ${build.builder.name}`,
          );
        },
      };
    }
    case 'build_start_end': {
      const start = createFormatter(g.start_formatter ?? renderable('Build started.'));
      const end = createFormatter(g.end_formatter ?? renderable('Build done.'));
      return {
        wants: (k) => k === 'build-new' || k === 'build-finished',
        needs: (k) => needs(k === 'build-new' ? start : end),
        generate(kind, build, s) {
          if (!neededByProps(g, build)) return null;
          return report(g, kind === 'build-new' ? start : end, build, s, ALL_MODES, false, null);
        },
      };
    }
    case 'build_request': {
      const f = createFormatter(g.formatter ?? renderable('Build pending.'));
      return {
        wants: (k) => k === 'request-new' || k === 'request-cancel',
        needs: () => needs(f),
        generate(kind, build, s) {
          const b =
            kind === 'request-cancel' ? { ...build, complete: true, results: Results.CANCELLED } : build;
          if (!neededByProps(g, b)) return null;
          return report(g, f, b, s, ALL_MODES, true, null);
        },
      };
    }
  }
}
