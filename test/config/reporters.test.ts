// The `reporters` section: Buildbot's argument names and defaults, refused with a message
// that names the key, and made into reporters (credentials read, templates compiled) at start.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../services/core/config/errors.js';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { createReporters } from '../../services/master/reporters/reporter.js';
import { problems } from './problems.js';

const BASE = `
workers: [{ name: w1, password: p }]
builders: [{ name: app, workers: [w1], steps: [{ type: shell, command: make }] }]
`;

const refused = (yaml: string): string[] => problems(BASE + yaml);

describe('reporters configuration', () => {
  it("takes Buildbot's defaults", () => {
    const cfg = parseMasterConfig(`${BASE}
reporters:
  - { type: github, token: t }
  - type: mail
    fromaddr: ci@example.com
    generators: [{ type: build_status, mode: all }]
`);
    expect(cfg.buildbotURL).toBe('http://localhost:8080/');
    expect(cfg.reporters[0]).toMatchObject({ type: 'github', verbose: false });
    expect(cfg.reporters[1]).toMatchObject({
      relayhost: 'localhost',
      smtpPort: 25,
      sendToInterestedUsers: true,
    });
    const mode = (cfg.reporters[1]!.generators![0] as { mode: string[] }).mode;
    expect(mode).toEqual(['failing', 'passing', 'warnings', 'exception', 'cancelled']);
    const [github, mail] = createReporters(cfg, {});
    expect(github!.name).toBe('github');
    // GitHubStatusPush's defaults: a pending report per request, a start and an end per build.
    expect(github!.generators).toHaveLength(2);
    expect(mail!.name).toBe('mail');
  });

  it('names what is wrong', () => {
    expect(refused('reporters: [{ type: bitbucket }]')).toEqual([
      'reporters[0].type: expected type to be one of github, gitlab, http, mail',
    ]);
    expect(refused('reporters: [{ type: github }]')).toEqual([
      'reporters[0]: expected exactly one of token, token_env, token_file',
    ]);
    expect(refused('reporters: [{ type: github, token: a, token_env: B }]')).toEqual([
      'reporters[0]: expected exactly one of token, token_env, token_file',
    ]);
    expect(refused('reporters: [{ type: http, serverUrl: "not a url" }]')[0]).toMatch(
      /^reporters\[0\]\.serverUrl: /,
    );
    expect(refused('reporters: [{ type: mail, fromaddr: nobody }]')).toEqual([
      'reporters[0].fromaddr: expected an email address',
    ]);
    expect(
      refused(
        `reporters: [{ type: github, token: t, generators: [{ type: build_status, builders: [nope] }] }]`,
      ),
    ).toEqual(['reporters[0].generators[0].builders[0]: no builder named "nope"']);
    expect(refused('reporters: [{ type: github, token: t }, { type: github, token: u }]')[0]).toMatch(
      /reporters.*github/,
    );
  });

  it('reads credentials at start, and refuses a template that does not compile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-reporters-'));
    try {
      writeFileSync(join(dir, 'token'), 'from-file\n');
      const ok = parseMasterConfig(`${BASE}
reporters: [{ type: github, token_file: ${join(dir, 'token')} }, { type: gitlab, token_env: GL }]`);
      expect(() => createReporters(ok, {})).toThrow(/GL is not set/);
      expect(createReporters(ok, { GL: 'x' })).toHaveLength(2);
      const missing = parseMasterConfig(`${BASE}
reporters: [{ type: github, token_file: ${join(dir, 'nope')} }]`);
      expect(() => createReporters(missing, {})).toThrow(/cannot read/);
      const bad = parseMasterConfig(`${BASE}
reporters:
  - type: mail
    fromaddr: ci@example.com
    generators: [{ type: build_status, message_formatter: { type: message, template: "{% if %}" } }]`);
      expect(() => createReporters(bad, {})).toThrow(ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
