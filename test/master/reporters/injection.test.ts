// What held in issue 28's second review, kept: a build's data (its properties, reason,
// branch, owner, which anyone who can push or force sets) reaches reporters' templates as
// data, never as template. A message template renders `{{ }}` and `{% %}` in a property as
// text, HTML templates escape it, a renderable template does not interpolate a property's
// value again, a subject stays one line; and an owner address carrying a header of its own
// is no recipient. Pure logic of the formatters and of mail's recipients (the SMTP path is
// mail.test.ts's).
import { describe, expect, it } from 'vitest';
import type { FormatterConfig } from '../../../services/core/config/master-config.js';
import { createFormatter, renderable } from '../../../services/master/reporters/formatters.js';
import { interestedAddresses } from '../../../services/master/reporters/kinds/mail.js';
import type { BuildDict, FormatContext } from '../../../services/master/reporters/report.js';

const TEMPLATE = '{{ 7*7 }}{% for x in [1,2,3] %}X{% endfor %}{{ build.constructor }}';
const HTML = '<script>alert(1)</script><img src=x onerror=alert(2)>';
const CRLF = 'main\r\nBcc: evil@example.com\r\n\r\nbody';

const build: BuildDict = {
  buildid: 1,
  number: 1,
  builderid: 1,
  complete: true,
  results: 2,
  state_string: 'failed',
  properties: {
    reason: [TEMPLATE, 'Force'],
    note: [HTML, 'Force'],
    branch: [CRLF, 'Build'],
    secretName: ['%(prop:token)s %(secret:deploy)s', 'Force'],
    token: ['the-token', 'Build'],
  },
  builder: { builderid: 1, name: 'app', tags: [] },
  buildset: { bsid: 1, sourcestamps: [] },
  buildrequest: {},
  url: 'http://ci.example.test/#/builders/1/builds/1',
};
const ctx: FormatContext = {
  title: 'CI',
  buildbotURL: 'http://ci.example.test/',
  mode: ['failing'],
  users: [],
  isBuildset: false,
};
const format = (cfg: FormatterConfig) => createFormatter(cfg).format(build, ctx);
/** A MessageFormatter with these templates. */
const message = (template_type: 'plain' | 'html', template: string, subject: string): FormatterConfig => ({
  type: 'message',
  template_type,
  template,
  subject,
  want_properties: true,
  want_steps: false,
  want_logs: false,
});

describe("a reporter's template fed a build's hostile data", () => {
  it('renders template syntax in a property as text, in the body and the subject', () => {
    const m = format(
      message('plain', 'reason={{ build.properties.reason[0] }}', 'on {{ build.properties.reason[0] }}'),
    );
    expect(m.body).toBe(`reason=${TEMPLATE}`);
    expect(m.subject).toBe(`on ${TEMPLATE}`);
  });

  it('escapes HTML in an html template, and keeps the subject one line', () => {
    const m = format(
      message('html', '<p>{{ build.properties.note[0] }}</p>', 'branch {{ build.properties.branch[0] }}'),
    );
    expect(m.body).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;</p>');
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject).toBe('branch main Bcc: evil@example.com body');
  });

  it('does not interpolate a property value again in a renderable template', () => {
    const m = format(renderable('said %(prop:secretName)s'));
    expect(m.body).toBe('said %(prop:token)s %(secret:deploy)s');
  });

  it('takes no owner address that carries a header as a recipient', () => {
    expect(
      interestedAddresses(
        ['alice@example.com\r\nBcc: evil@example.com', 'bob\nCc: evil@example.com', 'carol'],
        'example.com',
      ),
    ).toEqual(['carol@example.com']);
  });
});
