// The default templates of the `message` formatter (Buildbot's MessageFormatter without a
// template): Jinja, rendered by nunjucks over the context of formatters.ts, which has every
// name Buildbot's context has (status_detected, buildername, build, build_url, blamelist...),
// so a template written for Buildbot reads the same values here. The wording is Flotilla's.

export const DEFAULT_PLAIN_BODY = `\
Flotilla detected a {{ status_detected }} on builder {{ buildername }} while building {{ projects }}.

Details: {{ build_url }}

State:     {{ build.state_string }}
Revision:  {{ build.properties.got_revision[0] if build.properties.got_revision else '(unknown)' }}
Worker:    {{ workername }}
Reason:    {{ build.properties.reason[0] if build.properties.reason else '(unknown)' }}
Blamelist: {{ blamelist | join(', ') }}

Steps:
{% for step in build.steps %}  {{ step.number }}. {{ step.name }}: {{ result_names[step.results] }}
{% for log in step.logs %}       {{ log.name }}: {{ log.url }}
{% endfor %}{% else %}  (no steps)
{% endfor %}`;

export const DEFAULT_HTML_BODY = `\
<p>Flotilla detected a {{ status_detected }} on builder <a href="{{ build_url }}">{{ buildername }}</a>
while building {{ projects }}.</p>
<ul>
  <li>State: {{ build.state_string }}</li>
  <li>Revision: {{ build.properties.got_revision[0] if build.properties.got_revision else '(unknown)' }}</li>
  <li>Worker: {{ workername }}</li>
  <li>Reason: {{ build.properties.reason[0] if build.properties.reason else '(unknown)' }}</li>
  <li>Blamelist: {{ blamelist | join(', ') }}</li>
</ul>
<p>Steps:</p>
<ol>
{% for step in build.steps %}  <li style="{{ results_style[step.results] }}">{{ step.name }}: {{ result_names[step.results] }}
{% for log in step.logs %}    <a href="{{ log.url }}">{{ log.name }}</a>
{% endfor %}  </li>
{% else %}  <li>no steps</li>
{% endfor %}</ol>
`;

export const DEFAULT_SUBJECT =
  "[{{ result_names[results] if results is number else 'pending' }}] Flotilla ({{ buildbot_title }}): " +
  '{{ build.properties.project[0] if is_buildset and build.properties.project else buildername }} - ' +
  '{{ build.state_string }} ' +
  "({{ build.properties.branch[0] if build.properties.branch and build.properties.branch[0] else (build.properties.got_revision[0] if build.properties.got_revision else '(unknown revision)') }})";

/** Step colours of the default HTML body, by result code. */
export const RESULTS_STYLE: Record<number, string> = {
  0: '',
  1: 'color: #f80;',
  2: 'color: #f00; font-weight: bold;',
  3: 'color: #4af;',
  4: 'color: #f0f; font-weight: bold;',
  5: 'color: #4af;',
  6: 'color: #4af;',
};
