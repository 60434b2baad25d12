// Message formatters (buildbot/reporters/message.py): what a report says about a build.
// - message: Buildbot's MessageFormatter, a Jinja template for the body and one for the
//   subject, rendered here by nunjucks (Jinja's syntax, with its Python-compatible methods on
//   objects and lists: `build['properties'].get('branch')` works). The context has every
//   name Buildbot's has. HTML bodies are autoescaped (Buildbot's are not): a commit message
//   or an author's name is shown, never interpreted, in the mail.
// - renderable: MessageFormatterRenderable, an Interpolate template over the properties
//   (`Build %(prop:buildnumber)s started.`).
// - json: the build's data itself, as HttpStatusPush's default formatter sends it.
import type nunjucks from 'nunjucks';
import type { FormatterConfig, ReportMode } from '../../core/config/master-config.js';
import { RESULT_NAMES, Results } from '../../core/results.js';
import { interpolate } from '../builds/interpolate.js';
import { loadNunjucks } from './packages.js';
import type { BuildDict, FormatContext, Message } from './report.js';
import { DEFAULT_HTML_BODY, DEFAULT_PLAIN_BODY, DEFAULT_SUBJECT, RESULTS_STYLE } from './templates.js';

export interface Formatter {
  readonly wantSteps: boolean;
  readonly wantLogs: boolean;
  format(build: BuildDict, ctx: FormatContext): Message;
}

const statusString = (r: number | null): string =>
  r === null ? 'not finished' : (RESULT_NAMES[r] ?? 'Invalid status');

/** Buildbot's status_detected: the build's outcome, compared with the previous one by some modes. */
function statusDetected(
  mode: FormatContext['mode'],
  results: number | null,
  previous: number | null,
): string {
  const compares = (m: ReportMode) => mode.includes(m);
  if (results === Results.FAILURE)
    return (compares('change') || compares('problem')) && previous !== null && previous !== Results.FAILURE
      ? 'new failure'
      : 'failed build';
  if (results === Results.WARNINGS) return 'problem in the build';
  if (results === Results.SUCCESS)
    return compares('change') && previous !== null && previous !== results
      ? 'restored build'
      : 'passing build';
  if (results === Results.EXCEPTION) return 'build exception';
  return `${statusString(results)} build`;
}

function summary(build: BuildDict): string {
  const detail = build.state_string ? `: ${build.state_string}` : '';
  if (build.results === Results.SUCCESS) return 'Build succeeded!';
  if (build.results === Results.WARNINGS) return `Build Had Warnings${detail}`;
  if (build.results === Results.CANCELLED) return 'Build was cancelled';
  return `BUILD FAILED${detail}`;
}

function sourceStampsText(build: BuildDict): string {
  return build.buildset.sourcestamps
    .map((ss) => {
      const where = `${ss.branch ? `[branch ${ss.branch}] ` : ''}${ss.revision ?? 'HEAD'}${ss.patch ? ' (plus patch)' : ''}`;
      return `Build Source Stamp${ss.codebase ? ` '${ss.codebase}'` : ''}: ${where}\n`;
    })
    .join('');
}

/** The names a `message` template sees (Buildbot's create_context_for_build, and more). */
export function templateContext(build: BuildDict, ctx: FormatContext): Record<string, unknown> {
  const previous = build.prev_build ? build.prev_build.results : null;
  const projects = [...new Set(build.buildset.sourcestamps.map((s) => s.project).filter(Boolean))];
  return {
    results: build.results,
    result_names: RESULT_NAMES,
    results_style: RESULTS_STYLE,
    mode: ctx.mode,
    buildername: build.builder.name,
    workername: build.properties.workername?.[0] ?? '<unknown>',
    buildset: build.buildset,
    build,
    is_buildset: ctx.isBuildset,
    projects: projects.length ? projects.join(', ') : ctx.title,
    previous_results: previous,
    status_detected: statusDetected(ctx.mode, build.results, previous),
    build_url: build.url,
    buildbot_title: ctx.title,
    buildbot_url: ctx.buildbotURL,
    blamelist: ctx.users,
    summary: summary(build),
    sourcestamps: sourceStampsText(build),
  };
}

function jinja(source: string, autoescape: boolean): nunjucks.Template {
  const { Environment, Template } = loadNunjucks();
  const env = new Environment(null, { autoescape, throwOnUndefined: false });
  // Compiled now (`true`): a syntax error is the configuration's, reported at start.
  return new Template(source, env, undefined, true);
}

function messageFormatter(cfg: Extract<FormatterConfig, { type: 'message' }>): Formatter {
  const type = cfg.template_type;
  const defaultBody = cfg.template === undefined;
  const body = jinja(
    cfg.template ?? (type === 'html' ? DEFAULT_HTML_BODY : DEFAULT_PLAIN_BODY),
    type === 'html',
  );
  const subject = jinja(cfg.subject ?? DEFAULT_SUBJECT, false);
  return {
    wantSteps: defaultBody || cfg.want_steps || cfg.want_logs,
    wantLogs: defaultBody || cfg.want_logs,
    format(build, ctx) {
      const names = templateContext(build, ctx);
      // A subject is one line, whatever the template's data held.
      return { body: body.render(names), subject: subject.render(names).replace(/[\r\n]+/g, ' '), type };
    },
  };
}

function renderableFormatter(cfg: Extract<FormatterConfig, { type: 'renderable' }>): Formatter {
  return {
    wantSteps: false,
    wantLogs: false,
    format(build) {
      const subject = cfg.subject === undefined ? null : interpolate(cfg.subject, build.properties);
      const body = cfg.template === null ? null : interpolate(cfg.template, build.properties);
      return { body, subject, type: 'plain' };
    },
  };
}

const jsonFormatter: Formatter = {
  wantSteps: false,
  wantLogs: false,
  format: (build) => ({ body: build, subject: null, type: 'json' }),
};

export function createFormatter(spec: FormatterConfig): Formatter {
  switch (spec.type) {
    case 'message':
      return messageFormatter(spec);
    case 'renderable':
      return renderableFormatter(spec);
    case 'json':
      return jsonFormatter;
  }
}

/** Buildbot's MessageFormatter() with its default templates. */
export const message = (template_type: 'plain' | 'html'): FormatterConfig => ({
  type: 'message',
  template_type,
  want_properties: true,
  want_steps: false,
  want_logs: false,
});

/** Buildbot's MessageFormatterRenderable(text): the defaults of the status pushes. */
export const renderable = (template: string): FormatterConfig => ({ type: 'renderable', template });
