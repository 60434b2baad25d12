// The Buildbot importer (deploy/import/buildbot_to_flotilla.py, issue 31 §1), run as a user
// runs it (`npm run import-buildbot-config -- master.cfg`: the real python3 with Debian's
// buildbot 3.7) on Buildbot's own sample.cfg, the oracle's master.cfg and two configurations in
// the style of public installations. For each, the YAML it writes passes the master's checks
// unchanged (what checkconfig runs), and the list of what it could not convert is exactly the
// expected one, on stderr and in the YAML's closing comment block alike.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { MasterConfig } from '../../services/core/config/master-config.js';
import { checkMasterConfig } from '../../services/master/config-check.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'import-buildbot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SAMPLE = '/usr/lib/python3/dist-packages/buildbot/scripts/sample.cfg';
const ORACLE = 'test/fixtures/buildbot-3.7/master.cfg';
const MATRIX = 'test/fixtures/buildbot-import/matrix.cfg';
const PIPELINE = 'test/fixtures/buildbot-import/pipeline.cfg';
const FORGES = 'test/fixtures/buildbot-import/forges.cfg';
const KINDS = 'test/fixtures/buildbot-import/kinds.cfg';
const PROJECTS = 'test/fixtures/buildbot-import/projects.cfg';
const STEPS = 'test/fixtures/buildbot-import/steps.cfg';

const NO_FORM = 'no Flotilla step of this kind: replace it with a shell step or leave it out';
const DB = 'set DATABASE_URL in the environment of the masters and API pods to a PostgreSQL URL';
// What sample.cfg-like configurations lose: their SQLite database.
const SQLITE = [`c['db']: db_url 'sqlite:///state.sqlite' -> ${DB}`];

interface Imported {
  config: MasterConfig;
  yaml: string;
  summary: string;
  losses: string[];
}

// The script looks for a Python that imports Buildbot (python3 on PATH, then Debian's) unless
// BUILDBOT_PYTHON names one. The first case goes through that search as a user's run does; the
// rest name Debian's, which the search finds here: each search costs 0.15 CPU s more (a
// pyenv shim's python3 fails the import, then Debian's passes), 14 times in this file. The
// refusals below go through the search too.
const PYTHON = { ...process.env, BUILDBOT_PYTHON: '/usr/bin/python3' };

async function importConfig(cfg: string, search = false): Promise<Imported> {
  const { stdout, stderr } = await run('sh', ['deploy/import/import-buildbot-config.sh', cfg], {
    env: search ? process.env : PYTHON,
  });
  const lines = stderr.split('\n');
  const summary = lines.find((l) => l.startsWith(`${cfg}: converted `)) ?? '';
  const losses = lines.filter((l) => l.startsWith('  not converted: ')).map((l) => l.slice(17));
  // The same list closes the YAML, as comments.
  const block = stdout.slice(stdout.lastIndexOf('\n# Not converted ('));
  expect(block.split('\n').slice(2, -1)).toEqual(losses.map((l) => `#   ${l}`));
  const path = join(dir, `${cfg.replaceAll('/', '_')}.yaml`);
  writeFileSync(path, stdout);
  return { config: checkMasterConfig(path, {}), yaml: stdout, summary, losses };
}

describe('import-buildbot-config', () => {
  it("converts Buildbot's sample.cfg: only the database stays", async () => {
    const r = await importConfig(SAMPLE, true);
    expect(r.summary).toBe(
      `${SAMPLE}: converted 1 builders (2 steps), 2 schedulers, 0 reporters; 1 not converted`,
    );
    expect(r.losses).toEqual(SQLITE);
    // The workers keep PB on 9989; Flotilla's own agents move off it.
    expect(r.config.protocols).toMatchObject({ pb: { port: 9989 }, flotilla: { port: 9990 } });
    const [b] = r.config.builders;
    expect(b!.steps.map((s) => s.type)).toEqual(['git', 'shell']);
    expect(b!.steps[1]).toMatchObject({ command: ['trial', 'hello'], env: { PYTHONPATH: '.' } });
    expect(r.config.schedulers[0]).toMatchObject({
      type: 'single-branch',
      name: 'all',
      change_filter: { branch: 'master' },
    });
    expect(r.config.change_sources[0]).toMatchObject({
      branches: ['master'],
      poll_interval: 300,
      workdir: 'gitpoller-workdir',
    });
  });

  it("converts the oracle's master.cfg, naming its custom classes and callables", async () => {
    const r = await importConfig(ORACLE);
    expect(r.summary).toBe(
      `${ORACLE}: converted 5 builders (18 steps), 9 schedulers, 0 reporters; 4 not converted`,
    );
    expect(r.losses).toEqual([
      `c['db']: db_url 'postgresql+psycopg2://buildbot:buildbot@127.0.0.1:55432/buildbot' -> ${DB}`,
      'builder runtests, step 5 (hidden skipped): hideStepIf Python callable is_skipped (defined in master.cfg) -> written without it: write hideStepIf as a condition on properties',
      `builder runtests, step 6 (report): step class ReportStep (defined in master.cfg) -> ${NO_FORM}`,
      `builder flaky, step 1 (mode): step class ModeStep (defined in master.cfg) -> ${NO_FORM}`,
    ]);
    // `buildbot sendchange` keeps working: PBChangeSource on the workers' PB port.
    expect(r.config.change_sources).toMatchObject([{ type: 'pb', user: 'change', passwd: 'changepw' }]);
    // AnyBranchScheduler and the filters, in Buildbot's names.
    expect(r.config.schedulers.filter((s) => s.type !== 'triggerable')).toMatchObject([
      { type: 'single-branch', name: 'on-master', change_filter: { branch: 'master' } },
      {
        type: 'any-branch',
        name: 'release-branches',
        tree_stable_timer: 2,
        change_filter: { branch_re: 'release/.*' },
      },
      { type: 'single-branch', name: 'lib-changes', change_filter: { codebase: 'lib' } },
    ]);
    const runtests = r.config.builders.find((b) => b.name === 'runtests')!;
    expect(runtests.steps.map((s) => s.name)).toEqual([
      'set stage',
      'get answer',
      'unit tests',
      'stderr noise',
      'lint',
      'hidden skipped',
      'sleep',
    ]);
    // A plain string is not a template in Buildbot: its percent signs stay literal.
    expect(runtests.steps[0]).toMatchObject({
      type: 'set_property_value',
      property: 'stage',
      value: 'testing',
    });
    expect(runtests.steps[2]).toMatchObject({ command: expect.stringContaining('printf "test_%%03d') });
    const trigger = r.config.builders.find((b) => b.name === 'build')!.steps[2]!;
    expect(trigger).toMatchObject({
      type: 'trigger',
      schedulers: ['package-trigger'],
      waitForFinish: true,
      updateSourceStamp: true,
      set_properties: { parent_version: '%(prop:version)s', fail: '%(prop:fail:~no)s' },
    });
    expect(r.config.force_schedulers.map((f) => f.name)).toEqual([
      'force-runtests',
      'force-build',
      'force-package',
      'force-deploy',
      'force-flaky',
    ]);
    expect(r.config.workers.map((w) => [w.name, w.max_builds])).toEqual([
      ['worker1', 3],
      ['worker2', 3],
      ['offline-worker', 1],
    ]);
  });

  it('converts the forges’ change hooks, a proxy login and Vault and pass secrets; only their secrets stay', async () => {
    const r = await importConfig(FORGES);
    expect(r.summary).toBe(
      `${FORGES}: converted 1 builders (2 steps), 1 schedulers, 0 reporters; 6 not converted`,
    );
    const env = (name: string, where: string) => `set ${name} in the ${where} environment to it`;
    expect(r.losses).toEqual([
      `c['secretsProviders'][0]: vaultToken (a string) -> ${env('VAULT_TOKEN', "masters'")}`,
      `c['secretsProviders'][1]: gpgPassphrase (a string) -> ${env('PASS_GPG_PASSPHRASE', "masters'")}`,
      "c['www']['auth']: RemoteUserAuth believes the header from any client -> set auth.remote_user.trusted_proxies to your proxy's addresses (written: 127.0.0.1)",
      `c['www']['change_hook_dialects']['github']: secret util.Secret('github-hook') -> ${env('GITHUB_HOOK_SECRET', "API pods'")}`,
      `c['www']['change_hook_dialects']['github']: token util.Secret('github-api') -> ${env('GITHUB_API_TOKEN', "API pods'")}`,
      `c['www']['change_hook_dialects']['gitlab']: secret util.Secret('gitlab-token') -> ${env('GITLAB_HOOK_TOKEN', "API pods'")}`,
    ]);
    expect(r.config.change_hooks).toEqual({
      github: {
        secret_env: 'GITHUB_HOOK_SECRET',
        token_env: 'GITHUB_API_TOKEN',
        github_api_endpoint: 'https://github.example.org/api/v3',
        pullrequest_ref: 'head',
        skips: [String.raw`\[no ci\]`],
        github_property_whitelist: ['github.base.ref'],
      },
      gitlab: { secret_env: 'GITLAB_HOOK_TOKEN' },
      bitbucket: {},
    });
    expect(r.config.secrets).toEqual([
      {
        type: 'vault',
        vaultServer: 'https://vault.example.org:8200',
        vaultToken_env: 'VAULT_TOKEN',
        secretsmount: 'ci',
        apiVersion: 2,
      },
      { type: 'pass', gpgPassphrase_env: 'PASS_GPG_PASSPHRASE' },
    ]);
    expect(r.config.auth.remote_user).toEqual({
      header: 'X-Remote-User',
      headerRegex: '(?P<username>[^ @]+)@(?P<realm>[^ @]+)',
      trusted_proxies: ['127.0.0.1'],
    });
    // No secret's value is written into the YAML.
    for (const value of ['s.vault-root-token', 'unlock']) expect(r.yaml).not.toContain(value);
    expect(r.config.builders[0]!.steps[1]).toMatchObject({
      command: ['deploy', '--key', '%(secret:deploy/key)s'],
    });
  });

  it.each([
    [
      "util.GitHubAuth('gh-client', util.Secret('gh-oauth'), serverURL='https://ghe.example.org')",
      { provider: 'github', serverURL: 'https://ghe.example.org', clientId: 'gh-client', autologin: false },
    ],
    [
      "util.GitHubAuth('gh-v4-client', 'gh-s3cret', apiVersion=4, getTeamsMembership=True)",
      {
        provider: 'github',
        clientId: 'gh-v4-client',
        autologin: false,
        apiVersion: 4,
        getTeamsMembership: true,
      },
    ],
    [
      "util.GitLabAuth('https://gitlab.example.org', 'gl-client', 'gl-s3cret')",
      {
        provider: 'gitlab',
        instanceUri: 'https://gitlab.example.org',
        clientId: 'gl-client',
        autologin: false,
      },
    ],
    [
      "util.GoogleAuth('g-client', 'g-s3cret', autologin=True)",
      { provider: 'google', clientId: 'g-client', autologin: true },
    ],
  ])('converts the OAuth2 login %s, its secret read from the environment', async (login, expected) => {
    const cfg = join(dir, `oauth2-${expected.clientId}.cfg`);
    writeFileSync(
      cfg,
      readFileSync(FORGES, 'utf8').replace("util.RemoteUserAuth(header='X-Remote-User')", login),
    );
    const r = await importConfig(cfg);
    expect(r.config.auth.oauth2).toEqual({
      apiVersion: 3,
      getTeamsMembership: false,
      ...expected,
      clientSecret_env: 'OAUTH2_CLIENT_SECRET',
    });
    expect(r.losses.filter((l) => l.startsWith("c['www']['auth']"))).toEqual([
      expect.stringMatching(
        /^c\['www'\]\['auth'\]: clientSecret .* -> set OAUTH2_CLIENT_SECRET in the API pods' environment to it$/,
      ),
    ]);
    expect(r.yaml).not.toContain('s3cret');
  });

  it("converts HTPasswdAuth to auth.htpasswd_file, saying that Buildbot's plain lines must be hashed", async () => {
    const cfg = join(dir, 'htpasswd.cfg');
    writeFileSync(
      cfg,
      readFileSync(FORGES, 'utf8').replace(
        "util.RemoteUserAuth(header='X-Remote-User')",
        "util.HTPasswdAuth('/etc/buildbot/htpasswd')",
      ),
    );
    const r = await importConfig(cfg);
    expect(r.config.auth.htpasswd_file).toBe('/etc/buildbot/htpasswd');
    expect(r.losses).toContain(
      "c['www']['auth']: HTPasswdAuth('/etc/buildbot/htpasswd'): its lines hold plain passwords for Buildbot -> hash each with htpasswd -B (Flotilla takes bcrypt, $apr1$ or {SHA} lines only)",
    );
  });

  it('converts builders made in a loop, templates, locks and filters, and lists what it could not', async () => {
    const r = await importConfig(MATRIX);
    expect(r.summary).toBe(
      `${MATRIX}: converted 3 builders (18 steps), 5 schedulers, 1 reporters; 7 not converted`,
    );
    const upload = (b: string) =>
      `builder build-${b}, step 5 (upload): doStepIf Python callable is_main (defined in master.cfg) -> written as doStepIf: false (the step is skipped) until you write it as a condition on properties`;
    expect(r.losses).toEqual([
      `c['db']: db_url 'postgresql://buildbot@db.example.org/buildbot' -> ${DB}`,
      upload('debian-12'),
      upload('ubuntu-2204'),
      upload('fedora-39'),
      "c['services'][1] (MailNotifier): buildbot.reporters.mail.MailNotifier object with arguments ['extraRecipients', 'fromaddr', 'sendToInterestedUsers'] -> configure it under reporters: in YAML by hand (docs/migrating-from-buildbot.md)",
      "c['www']['auth']: buildbot.www.auth.UserPasswordAuth object -> configure auth: in YAML by hand (docs/migrating-from-buildbot.md)",
      "c['www']['change_hook_dialects']['github']: secret util.Secret('github-hook') -> set GITHUB_HOOK_SECRET in the API pods' environment to it",
    ]);
    expect(r.config.change_hooks).toEqual({
      base: { enabled: true },
      github: expect.objectContaining({ secret_env: 'GITHUB_HOOK_SECRET' }),
    });
    expect(r.yaml).toMatch(
      /change_hooks:\n {2}base:\n {4}enabled: true\n {2}github:\n {4}secret_env: GITHUB_HOOK_SECRET\n/,
    );
    const b = r.config.builders[1]!;
    expect(b.name).toBe('build-ubuntu-2204');
    expect(b.steps.map((s) => s.name ?? s.type)).toEqual([
      'git',
      'configure',
      'compile',
      'unit tests',
      'get version',
      'upload',
    ]);
    expect(b.steps[2]).toMatchObject({ locks: [{ lock: 'compile', mode: 'exclusive', count: 1 }] });
    expect(b.steps[3]).toMatchObject({ env: { CI: 'true', JOBS: '%(prop:jobs:~2)s' }, timeout: 3600 });
    expect(b.steps[5]).toMatchObject({
      doStepIf: false,
      command: expect.stringContaining('%(secret:deploy_host)s'),
    });
    expect(r.config.locks).toEqual([
      { name: 'compile', type: 'worker', maxCount: 2, maxCountForWorker: {} },
      { name: 'deploy', type: 'master', maxCount: 1, maxCountForWorker: {} },
    ]);
    expect(r.config.schedulers.map((s) => [s.type, s.name])).toEqual([
      ['single-branch', 'main'],
      ['single-branch', 'release'],
      ['nightly', 'nightly'],
      ['periodic', 'weekly'],
    ]);
    expect(r.config.schedulers[0]).toMatchObject({ change_filter: { branch: 'main', project: 'example' } });
    expect(r.config.schedulers[1]).toMatchObject({ change_filter: { branch_re: 'release/.*' } });
    expect(r.config.schedulers[2]).toMatchObject({
      cron: '0 3 * * *',
      only_if_changed: true,
      branch: 'main',
    });
    // Keys Flotilla ignores are carried over (and named at start), not dropped.
    expect(r.yaml).toContain('buildbotNetUsageData: null');
    expect(r.config.www).toMatchObject({ port: 8010 });
  });

  it('converts a configuration with no Python callable or custom class with no loss', async () => {
    const r = await importConfig(PIPELINE);
    expect(r.summary).toBe(
      `${PIPELINE}: converted 3 builders (10 steps), 3 schedulers, 1 reporters; 0 not converted`,
    );
    expect(r.losses).toEqual([]);
    const debug = r.config.builders[0]!;
    expect(debug.steps[1]).toMatchObject({
      name: 'compile debug',
      command: {
        interpolate: 'make CFLAGS="%(kw:flags)s" VERSION=%(prop:version:-dev)s',
        kw: { flags: '-O0 -g' },
      },
    });
    expect(debug.steps[2]).toMatchObject({ name: 'unit tests', decodeRC: { '0': 0, '1': 1 } });
    expect(debug.locks).toEqual([{ lock: 'app-slot', mode: 'exclusive', count: 1 }]);
    expect(r.config.reporters).toMatchObject([{ type: 'http', serverUrl: 'http://127.0.0.1:9090/status' }]);
  });

  it('converts the step kinds test/e2e/imported-builders.test.ts compares with Buildbot with no loss', async () => {
    const r = await importConfig(STEPS);
    expect([r.summary, r.losses]).toEqual([
      `${STEPS}: converted 3 builders (25 steps), 2 schedulers, 0 reporters; 0 not converted`,
      [],
    ]);
  });

  it("converts Buildbot's warning-counting, ShellSequence, SetProperty, directory and master steps, a master shell string's properties as its arguments", async () => {
    const r = await importConfig(KINDS);
    expect([r.summary, r.losses]).toEqual([
      `${KINDS}: converted 1 builders (13 steps), 3 schedulers, 0 reporters; 1 not converted`,
      SQLITE,
    ]);
    // A Dependent on the force scheduler: Buildbot's upstream object becomes its name.
    expect(r.config.schedulers.find((s) => s.name === 'after-force')).toMatchObject({
      type: 'dependent',
      upstream: 'force',
      builders: ['c-project'],
    });
    expect(r.config.properties).toEqual({ site: 'ci.example.org', retries: 2 });
    // OldBuildCanceller: its SourceStampFilter in Flotilla's (change_filter's) keys.
    expect(r.config.services).toEqual([
      {
        type: 'old_build_canceller',
        name: 'canceller',
        filters: [{ builders: ['c-project'], branch_re: '.*' }],
      },
    ]);
    expect(r.config.builders[0]).toMatchObject({
      workerbuilddir: 'cproj',
      env: { CC: 'gcc', BUILD: '%(prop:buildnumber)s' },
      defaultProperties: { jobs: 2 },
    });
    expect(r.config.builders[0]!.steps).toMatchObject([
      { type: 'remove_directory', dir: 'build/dist', haltOnFailure: true },
      { type: 'make_directory', dir: 'build/dist' },
      { type: 'set_property_value', property: 'flavour', value: '%(prop:buildername)s-opt' },
      { type: 'set_property_value', name: 'jobs', property: 'jobs', value: 4 },
      {
        type: 'compile',
        command: ['make', '-j4'],
        warningPattern: '(?i)^(.*?):(\\d+): warning: (.*)$',
        warningExtractor: 'regexp_groups',
        suppressionFile: '.warnings-ok',
        suppressionList: [[null, 'deprecated', null, null]],
        maxWarnCount: 50,
        haltOnFailure: true,
        descriptionDone: 'compile',
      },
      { type: 'test', command: ['make', 'check'], haltOnFailure: true, warnOnFailure: true },
      { type: 'warning_counting_shell', name: 'lint', command: 'make lint', warnOnWarnings: true },
      {
        type: 'shell_sequence',
        name: 'package',
        env: { LC_ALL: 'C' },
        commands: [
          { command: ['make', 'dist'], logname: 'dist', haltOnFailure: true, flunkOnFailure: true },
          {
            command: 'echo %(prop:flavour)s',
            logname: 'flavour',
            warnOnFailure: true,
            flunkOnFailure: false,
          },
          { command: 'ls dist', haltOnFailure: false },
        ],
      },
      { type: 'copy_directory', src: 'build/dist', dest: 'publish/dist', timeout: 300 },
      {
        type: 'master_shell',
        name: 'announce',
        command: ['notify', '%(prop:buildnumber)s'],
        env: { CHANNEL: '#builds' },
        haltOnFailure: true,
      },
      {
        type: 'trigger',
        name: 'publish',
        copy_properties: ['flavour'],
        sourceStamps: [{ codebase: '', branch: 'rel-%(prop:flavour)s' }],
      },
      { type: 'trigger', name: 'nightly', alwaysUseLatest: true },
      // The branch reaches the shell as its first argument, never as shell code.
      {
        type: 'master_shell',
        name: 'unsafe',
        command: ['/bin/sh', '-c', `deploy \${1}`, 'sh', '%(prop:branch)s'],
      },
    ]);
  });

  it('leaves out a master shell string whose property sits in single quotes or beside $1, naming it', async () => {
    const cfg = join(dir, 'quoted.cfg');
    writeFileSync(
      cfg,
      `${readFileSync(KINDS, 'utf8')}
f.addStep(steps.MasterShellCommand(name='quoted', command=util.Interpolate("echo '%(prop:branch)s'")))
f.addStep(steps.MasterShellCommand(name='dollar', command=util.Interpolate('echo $1 %(prop:branch)s')))
f.addStep(steps.MasterShellCommand(name='double', command=util.Interpolate('echo "at %(src::branch)s"')))
`,
    );
    const r = await importConfig(cfg);
    const lost = (n: number, name: string) =>
      `builder c-project, step ${n} (${name}): a shell string run on the master that takes properties, source stamps or worker info inside single quotes or beside $1... -> step not written: give the command as a list, each value one argument`;
    expect(r.losses.slice(1)).toEqual([lost(13, 'quoted'), lost(14, 'dollar')]);
    expect(r.config.builders[0]!.steps.at(-1)).toMatchObject({
      name: 'double',
      command: ['/bin/sh', '-c', `echo "at \${1}"`, 'sh', '%(src::branch)s'],
    });
  });

  it("writes every ChangeFilter key in Buildbot's names, and leaves out a scheduler whose filter has none", async () => {
    const cfg = join(dir, 'filters.cfg');
    writeFileSync(
      cfg,
      `import re
from buildbot.plugins import schedulers, util, worker
from buildbot.process.factory import BuildFactory
c = BuildmasterConfig = {'workers': [worker.Worker('w', 'pw')], 'protocols': {'pb': {'port': 9989}},
                           'db': {'db_url': 'sqlite://'}, 'buildbotNetUsageData': None}
c['builders'] = [util.BuilderConfig(name='b', workernames=['w'], factory=BuildFactory())]
c['schedulers'] = [
    schedulers.AnyBranchScheduler(name='releases', branches=['main', None], treeStableTimer=5, builderNames=['b']),
    schedulers.AnyBranchScheduler(name='most', builderNames=['b'], change_filter=util.ChangeFilter(
        branch_not_eq=None, branch_not_re=[re.compile('wip/'), 'tmp/'], project_not_eq='sandbox',
        repository_re=r'.*github\\.com/', category=['push', 'tag'], codebase_not_re='vendor')),
    schedulers.SingleBranchScheduler(name='nocase', builderNames=['b'],
        change_filter=util.ChangeFilter(branch_re=re.compile('release', re.I))),
    schedulers.SingleBranchScheduler(name='bydev', builderNames=['b'],
        change_filter=util.ChangeFilter(property_eq={'owner': 'me'})),
]
`,
    );
    const r = await importConfig(cfg);
    expect(r.losses.slice(1)).toEqual([
      "scheduler nocase: change filter branch_re=re.compile('release', re.IGNORECASE) (flags) -> scheduler not written: Flotilla's expressions take no flags; spell them out ([Rr]elease)",
      "scheduler bydev: change filter property_eq={'owner': 'me'} -> scheduler not written: no Flotilla form for this filter (Python callables and property filters); write it with the branch, project, repository, category and codebase keys",
    ]);
    expect(r.config.schedulers).toMatchObject([
      {
        type: 'any-branch',
        name: 'releases',
        tree_stable_timer: 5,
        change_filter: { branch: ['main', null] },
      },
      {
        type: 'any-branch',
        name: 'most',
        change_filter: {
          branch_not_eq: null,
          branch_not_re: ['wip/', 'tmp/'],
          project_not_eq: 'sandbox',
          repository_re: '.*github\\.com/',
          category: ['push', 'tag'],
          codebase_not_re: 'vendor',
        },
      },
    ]);
  });

  it("converts a Buildbot 4.3 master.cfg's projects and codebases, which Buildbot 3.7 cannot load", async () => {
    const r = await importConfig(PROJECTS);
    expect(r.summary).toBe(
      `${PROJECTS}: converted 2 builders (2 steps), 1 schedulers, 0 reporters; 1 not converted`,
    );
    expect(r.losses).toEqual([
      "c['projects'][1]: description_format 'rst' -> the description is kept as plain text (Flotilla knows markdown only)",
    ]);
    expect(r.config.projects).toEqual([
      { name: 'widgets', slug: 'w', description: 'Widgets, *built*', description_format: 'markdown' },
      { name: 'tools', description: 'Tools' },
    ]);
    expect(r.config.codebases).toEqual([
      { name: 'app', project: 'widgets' },
      { name: 'app', project: 'tools', slug: 'tools-app' },
    ]);
    expect(r.config.builders.map((b) => b.project)).toEqual(['widgets', undefined]);
    expect(r.config.change_sources[0]).toMatchObject({ codebase: { name: 'app', project: 'widgets' } });
  });

  it('refuses a master.cfg Buildbot refuses, with Buildbot’s errors, and a missing file', async () => {
    const bad = join(dir, 'bad.cfg');
    writeFileSync(
      bad,
      "from buildbot.plugins import worker\nc = BuildmasterConfig = {'workers': [worker.Worker('a b', 'pw')]}\n",
    );
    const failed = await run('sh', ['deploy/import/import-buildbot-config.sh', bad]).catch((e) => e);
    expect(failed.code).toBe(2);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain(
      `error: Buildbot does not load ${bad}:\n  worker name 'a b' is not an identifier\n`,
    );
    const missing = await run('sh', ['deploy/import/import-buildbot-config.sh', join(dir, 'nope.cfg')]).catch(
      (e) => e,
    );
    expect([missing.code, missing.stderr]).toEqual([2, `error: ${join(dir, 'nope.cfg')}: no such file\n`]);
  });
});
