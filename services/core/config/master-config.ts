// The master's YAML configuration: builders, workers, schedulers, force schedulers and
// auth. The schema is the documentation of every key; a mistake is reported with the
// path of the bad key and what was expected there.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { parseHash } from '../auth/password.js';
import { ConfigError } from './errors.js';

// Buildbot identifiers: builder, worker, scheduler and step names appear in URLs.
const identifier = z
  .string()
  .regex(
    /^[a-zA-Z_-][.a-zA-Z0-9_-]*$/,
    'expected an identifier (letters, digits, "_", "-", "."; not starting with a digit or ".")',
  )
  .max(50, 'expected at most 50 characters');

const worker = z
  .object({
    name: identifier,
    // Exactly one of these says where the password is; a literal only for local examples.
    password: z.string().min(1).optional(),
    password_env: z.string().min(1).optional(),
    password_file: z.string().min(1).optional(),
    max_builds: z.number().int().positive().default(1),
    properties: z.record(z.unknown()).default({}),
  })
  .strict()
  .refine((s) => [s.password, s.password_env, s.password_file].filter((v) => v !== undefined).length === 1, {
    message: 'expected exactly one of password, password_env, password_file',
  });

const command = z.union([z.string().min(1), z.array(z.string()).min(1)], {
  errorMap: () => ({ message: 'expected a shell string or a list of arguments' }),
});

const stepCommon = {
  name: identifier.optional(),
  description: z.string().optional(),
  descriptionDone: z.string().optional(),
  haltOnFailure: z.boolean().default(false),
  flunkOnFailure: z.boolean().default(true),
  warnOnFailure: z.boolean().default(false),
  alwaysRun: z.boolean().default(false),
  // Conditions on build properties: run (or hide) the step only when the property is truthy,
  // or equals the given value.
  doStepIf: z
    .union([z.boolean(), z.object({ property: z.string(), equals: z.unknown().optional() }).strict()])
    .optional(),
  hideStepIf: z
    .union([z.boolean(), z.object({ results: z.array(z.number().int().min(0).max(6)) }).strict()])
    .optional(),
  // Links shown with the step (Buildbot's addStepURL), with properties filled in when the
  // step starts: `{ name: coverage, url: "https://cov.example/%(prop:buildnumber)s" }`.
  urls: z.array(z.object({ name: z.string().min(1), url: z.string().min(1) }).strict()).default([]),
  timeout: z.number().positive().default(1200),
};

const shellStep = z
  .object({
    type: z.literal('shell'),
    command,
    workdir: z.string().optional(),
    env: z.record(z.string()).default({}),
    logfiles: z.record(z.string()).default({}),
    ...stepCommon,
  })
  .strict();

const setPropertyStep = z
  .object({
    type: z.literal('set_property'),
    command,
    property: z.string().min(1),
    strip: z.boolean().default(true),
    workdir: z.string().optional(),
    env: z.record(z.string()).default({}),
    ...stepCommon,
  })
  .strict();

const triggerStep = z
  .object({
    type: z.literal('trigger'),
    schedulers: z.array(identifier).min(1),
    waitForFinish: z.boolean().default(false),
    set_properties: z.record(z.unknown()).default({}),
    ...stepCommon,
  })
  .strict();

const step = z.discriminatedUnion('type', [shellStep, setPropertyStep, triggerStep], {
  errorMap: (issue, ctx) =>
    issue.code === 'invalid_union_discriminator'
      ? { message: 'expected type to be one of shell, set_property, trigger' }
      : { message: ctx.defaultError },
});

const builder = z
  .object({
    name: identifier,
    description: z.string().optional(),
    tags: z.array(z.string()).default([]),
    workers: z.array(identifier).min(1),
    collapse_requests: z.boolean().default(false),
    properties: z.record(z.unknown()).default({}),
    steps: z.array(step).default([]),
  })
  .strict();

const schedulerCommon = {
  name: identifier,
  builders: z.array(identifier).min(1),
  properties: z.record(z.unknown()).default({}),
  // The priority of the build requests it creates (higher first).
  priority: z.number().int().default(0),
  // Buildbot's codebases: the codebases a scheduler builds, each with the repository and
  // branch of its source stamp when no change names them. Default: one codebase, "".
  codebases: z
    .record(z.object({ repository: z.string().default(''), branch: z.string().nullable().default(null) }))
    .optional(),
};

const valueOrList = z.union([z.string(), z.array(z.string()).min(1)]);

const regularExpression = z.string().refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected a regular expression' },
);

// How a scheduler that watches changes picks and weighs them (Buildbot's change_filter,
// fileIsImportant and onlyImportant). A change is considered only if each field named in
// change_filter equals the value (or one of the values) given. With file_pattern (a
// JavaScript regular expression, searched in each file name), a change is important only if
// one of its files matches (a change that names no file counts as important); with
// only_important, unimportant changes are ignored instead of riding along in the next build.
const changeConsumption = {
  change_filter: z
    .object({
      repository: valueOrList.optional(),
      project: valueOrList.optional(),
      category: valueOrList.optional(),
    })
    .strict()
    .optional(),
  file_pattern: regularExpression.optional(),
  only_important: z.boolean().default(false),
};

const scheduler = z.discriminatedUnion('type', [
  // Builds the changes of one branch (null: the default branch); with a tree-stable timer,
  // once no change has come for that many seconds, one build set for all of them.
  z
    .object({
      type: z.literal('single-branch'),
      branch: z.string().nullable().default(null),
      tree_stable_timer: z.number().min(0).default(0),
      ...changeConsumption,
      ...schedulerCommon,
    })
    .strict(),
  // A build set when it starts, then every `period` seconds.
  z.object({ type: z.literal('periodic'), period: z.number().positive(), ...schedulerCommon }).strict(),
  // A build set at the times of a five-field cron expression (minute hour day-of-month month
  // day-of-week, in the master's local time); with only_if_changed, only when an important
  // change came since the last one. `branch` limits the changes it counts (absent: any branch;
  // null: the default branch).
  z
    .object({
      type: z.literal('nightly'),
      cron: z.string().regex(/^(\S+\s+){4}\S+$/, 'expected a five-field cron expression'),
      branch: z.string().nullable().optional(),
      only_if_changed: z.boolean().default(false),
      ...changeConsumption,
      ...schedulerCommon,
    })
    .strict(),
  // Build sets made by the trigger steps that name it.
  z.object({ type: z.literal('triggerable'), ...schedulerCommon }).strict(),
]);

// Force-form parameters, after Buildbot's ForceScheduler parameter classes: the same kinds,
// the same options and defaults, so that /forceschedulers answers what Buildbot answers.
const paramBase = {
  name: z.string(),
  label: z.string().optional(),
  tablabel: z.string().optional(),
  required: z.boolean().optional(),
  multiple: z.boolean().optional(),
  regex: z.string().optional(),
  hide: z.boolean().optional(),
  maxsize: z.number().int().positive().optional(),
  autopopulate: z.record(z.unknown()).optional(),
};
const sized = { size: z.number().int().positive().optional() };

export type ForceParameterConfig =
  | ({ type: 'fixed' | 'string' | 'text' | 'int' | 'boolean' | 'username' | 'choice' } & Record<
      string,
      unknown
    >)
  | ({ type: 'nested'; name: string; fields: ForceParameterConfig[] } & Record<string, unknown>);

const forceParameter: z.ZodType<ForceParameterConfig> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('fixed'), default: z.unknown().optional(), ...paramBase }).strict(),
    z.object({ type: z.literal('string'), default: z.string().optional(), ...sized, ...paramBase }).strict(),
    z
      .object({
        type: z.literal('text'),
        default: z.string().optional(),
        cols: z.number().int().positive().optional(),
        rows: z.number().int().positive().optional(),
        ...sized,
        ...paramBase,
      })
      .strict(),
    z
      .object({ type: z.literal('int'), default: z.number().int().optional(), ...sized, ...paramBase })
      .strict(),
    z.object({ type: z.literal('boolean'), default: z.boolean().optional(), ...paramBase }).strict(),
    z
      .object({
        type: z.literal('username'),
        default: z.string().optional(),
        need_email: z.boolean().optional(),
        ...sized,
        ...paramBase,
        name: z.string().optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal('choice'),
        choices: z.array(z.string()),
        default: z.union([z.string(), z.array(z.string())]).optional(),
        strict: z.boolean().optional(),
        ...paramBase,
      })
      .strict(),
    z
      .object({
        type: z.literal('nested'),
        fields: z.array(forceParameter),
        layout: z.enum(['vertical', 'tabs']).optional(),
        columns: z.number().int().min(1).max(4).optional(),
        ...paramBase,
      })
      .strict(),
  ]),
) as z.ZodType<ForceParameterConfig>;

// A codebase's branch/revision/repository/project: a form field (default), a fixed value
// (a string), or absent (null).
const codebaseSubfield = z.union([z.null(), z.string(), forceParameter]);
const codebaseField = z.union([
  z.string(),
  z
    .object({
      codebase: z.string().default(''),
      label: z.string().optional(),
      branch: codebaseSubfield.optional(),
      revision: codebaseSubfield.optional(),
      repository: codebaseSubfield.optional(),
      project: codebaseSubfield.optional(),
      hide: z.boolean().optional(),
      columns: z.number().int().min(1).max(4).optional(),
    })
    .strict(),
]);

const forceScheduler = z
  .object({
    name: identifier,
    builders: z.array(identifier).min(1),
    label: z.string().optional(),
    button_name: z.string().optional(),
    reason: forceParameter.optional(),
    username: forceParameter.optional(),
    reason_string: z.string().optional(),
    codebases: z.array(codebaseField).min(1).optional(),
    properties: z.array(forceParameter).default([]),
  })
  .strict();

// Authentication and authorization (services/core/auth, services/api/auth), after Buildbot's
// www['auth'] and www['authz']. With neither users nor oidc, everyone may do everything
// (Buildbot's NoAuth); once either is configured and allow_rules is absent, reads stay open
// and every control action needs a login (rule `any-control` for role `@authenticated`).
export const userSchema = z
  .object({
    username: z.string().min(1).max(256),
    // A hash in the PHC-like format `scrypt$N$r$p$salt$hash` (make one with
    // `node --import tsx services/core/auth/hash-password.ts`); never a plain password.
    password_hash: z
      .string()
      .regex(/^scrypt\$/, 'expected an scrypt hash (scrypt$...), never a plain password')
      .refine((h) => parseHash(h) !== null, {
        message: 'expected scrypt$N$r$p$salt$hash with N a power of two and affordable costs',
      }),
    // Buildbot's user info: email defaults to the user name, as Buildbot's default provider does.
    email: z.string().max(256).optional(),
    full_name: z.string().max(256).optional(),
    groups: z.array(z.string().max(256)).max(100).default([]),
  })
  .strict();

/** The users file (auth.users_file, the chart's users Secret): `users: [...]`. */
export const usersFileSchema = z.object({ users: z.array(userSchema).default([]) }).strict();

// A role matcher gives `role` to the users it matches: one of whose groups is listed, whose
// email is listed, whose email's domain is listed, whose user name is listed, or (owner) who
// owns the build or build request the action is about (Buildbot's RolesFromGroups with
// explicit groups, RolesFromEmails, RolesFromDomain, RolesFromUsername, RolesFromOwner).
// `group_prefix` alone is Buildbot's RolesFromGroups(groupPrefix): each group that starts
// with the prefix is a role, named without it ("" makes every group a role).
const roleMatcher = z
  .object({
    role: z.string().min(1).optional(),
    group_prefix: z.string().optional(),
    groups: z.array(z.string()).optional(),
    emails: z.array(z.string()).optional(),
    domains: z.array(z.string()).optional(),
    usernames: z.array(z.string()).optional(),
    owner: z.boolean().optional(),
  })
  .strict()
  .refine((m) => (m.role === undefined) !== (m.group_prefix === undefined), {
    message: 'expected exactly one of role, group_prefix',
  })
  .refine(
    (m) =>
      m.group_prefix !== undefined ||
      [m.groups, m.emails, m.domains, m.usernames].some((l) => l !== undefined) ||
      m.owner === true,
    { message: 'a role needs at least one of groups, emails, domains, usernames, owner' },
  )
  .refine(
    (m) =>
      m.group_prefix === undefined ||
      ([m.groups, m.emails, m.domains, m.usernames, m.owner] as unknown[]).every((v) => v === undefined),
    { message: 'group_prefix stands alone (no groups, emails, domains, usernames or owner with it)' },
  );

// Buildbot's endpoint matchers: any (AnyEndpointMatcher: every request), any-control
// (AnyControlEndpointMatcher: every JSON-RPC action), force, stop (a build's stop and a
// build request's cancel), rebuild, enable-scheduler, and view-builders (also spelled
// view-builds, Buildbot's ViewBuildsEndpointMatcher, which 3.7 left unimplemented): reads
// and events of builders and of what belongs to them.
export const ENDPOINT_MATCHERS = [
  'any',
  'any-control',
  'force',
  'stop',
  'rebuild',
  'enable-scheduler',
  'view-builders',
  'view-builds',
] as const;

// Rules are tried in order. The first that matches the request decides when the user has
// one of its roles (patterns: `*`, `?`, `[...]`) and allows it; otherwise a default_deny
// rule refuses (403), and a rule without default_deny lets the next rules decide. A request
// no rule refuses is allowed. Every logged-in user has the role `@authenticated`.
const allowRule = z
  .object({
    match: z.enum(ENDPOINT_MATCHERS),
    // For force, stop, rebuild and view-builders: only these builders (patterns); all without.
    builders: z.array(z.string().min(1)).optional(),
    roles: z.array(z.string().min(1)).default([]),
    default_deny: z.boolean().default(true),
  })
  .strict();

// A change source runs on exactly one master. Without a type it is only owned and shown
// (changes then come through the change hooks); `git` polls a repository (Buildbot's GitPoller).
const changeSource = z
  .object({
    name: z.string().min(1),
    type: z.literal('git').optional(),
    repourl: z.string().min(1).optional(),
    branches: z.array(z.string().min(1)).min(1).default(['main']),
    poll_interval: z.number().int().positive().default(600),
    project: z.string().default(''),
    category: z.string().optional(),
    codebase: z.string().default(''),
  })
  .strict()
  .refine((c) => c.type === undefined || c.repourl !== undefined, {
    message: 'a git change source needs repourl',
    path: ['repourl'],
  });
export type ChangeSourceConfig = z.infer<typeof changeSource>;

const isLoopback = (u: URL) => ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);

const auth = z
  .object({
    users: z.array(userSchema).default([]),
    // A YAML file holding more `users` (a mounted Secret, so hashes stay out of ConfigMaps).
    users_file: z.string().optional(),
    // GET /auth/login?token=<access token>: a JWT the provider signed, checked against its
    // key set (a file, or a URL fetched over https and cached), its issuer, our audience
    // and its expiry. The user's name comes from username_claim (falling back to `sub`),
    // groups from groups_claim, email (unless email_verified is false) and name as usual.
    oidc: z
      .object({
        issuer: z.string().url(),
        audience: z.string().min(1),
        jwks_file: z.string().min(1).optional(),
        jwks_url: z
          .string()
          .url()
          .refine((u) => new URL(u).protocol === 'https:' || isLoopback(new URL(u)), {
            message: 'expected an https URL (http only on the loopback interface)',
          })
          .optional(),
        username_claim: z.string().min(1).default('preferred_username'),
        groups_claim: z.string().min(1).default('groups'),
      })
      .strict()
      .refine((o) => (o.jwks_file === undefined) !== (o.jwks_url === undefined), {
        message: 'expected exactly one of jwks_file, jwks_url',
      })
      .optional(),
    role_matchers: z.array(roleMatcher).default([]),
    allow_rules: z.array(allowRule).optional(),
    // The session cookie's lifetime (the JWT's exp), as Buildbot's cookie_expiration_time.
    session_expiry_seconds: z
      .number()
      .int()
      .positive()
      .default(7 * 24 * 3600),
    // Failed logins (password or token) counted in Redis across API pods, per user name and
    // per client; past either limit, logins answer 429 until the window has passed.
    login_throttle: z
      .object({
        max_failures_per_user: z.number().int().positive().default(10),
        max_failures_per_client: z.number().int().positive().default(30),
        window_seconds: z.number().int().positive().default(900),
      })
      .strict()
      .default({}),
  })
  .strict();

// The HTTP face of the API pods (Buildbot's www settings where it has them).
const www = z
  .object({
    // Origins allowed to call the API from a browser (patterns, `*` any run); default: the
    // origin of PUBLIC_URL, as Buildbot's allowed_origins.
    allowed_origins: z.array(z.string().min(1)).optional(),
    // Which proxies' X-Forwarded-For to believe for the client address (rate limits, login
    // throttling): false (none), true (all), a number of hops, or addresses/CIDR ranges.
    trust_proxy: z
      .union([z.boolean(), z.number().int().min(0), z.array(z.string().min(1)).min(1)])
      .default(false),
    // Requests per client (a logged-in user, else an address; IPv6 by /64) in a window,
    // counted in Redis across API pods; beyond it, 429 with Retry-After.
    rate_limit: z
      .object({
        enabled: z.boolean().default(true),
        requests: z.number().int().positive().default(6000),
        window_seconds: z.number().int().positive().default(60),
      })
      .strict()
      .default({}),
    // Rendered pages each API pod keeps and serves again while the tables they were read
    // from are unchanged; max_mb bounds its memory. A pod learns of writes from the
    // database's notices and serves a kept page from memory while it knows them to be at
    // most max_staleness_ms behind; 0 checks every kept page against the database on every
    // request instead (never stale, one round trip each). See services/api/http/page-cache.ts.
    page_cache: z
      .object({
        enabled: z.boolean().default(true),
        max_mb: z.number().int().positive().default(64),
        max_staleness_ms: z.number().int().min(0).max(60_000).default(50),
      })
      .strict()
      .default({}),
    // Bigger requests are refused: body 413, request line and headers 431, URL 414.
    limits: z
      .object({
        body_bytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
        header_bytes: z
          .number()
          .int()
          .min(1024)
          .default(16 * 1024),
        url_bytes: z
          .number()
          .int()
          .min(256)
          .default(8 * 1024),
      })
      .strict()
      .default({}),
  })
  .strict();

// Change hooks on the API pods (Buildbot's change_hook_dialects): POST /change_hook/base
// when base.enabled (it has no authentication: enable it only behind something that has);
// POST /change_hook/github when `github` is present, its HMAC secret read from an
// environment variable or a file (at most one; with neither, signatures are not checked),
// and `codebase` given to the changes it makes.
const changeHooks = z
  .object({
    base: z
      .object({ enabled: z.boolean().default(false) })
      .strict()
      .optional(),
    github: z
      .object({
        secret_env: z.string().min(1).optional(),
        secret_file: z.string().min(1).optional(),
        codebase: z.string().optional(),
      })
      .strict()
      .refine((g) => g.secret_env === undefined || g.secret_file === undefined, {
        message: 'expected at most one of secret_env, secret_file',
      })
      .optional(),
  })
  .strict();

export const masterConfigSchema = z
  .object({
    title: z.string().default('Flotilla'),
    workers: z.array(worker).default([]),
    builders: z.array(builder).default([]),
    schedulers: z.array(scheduler).default([]),
    force_schedulers: z.array(forceScheduler).default([]),
    change_sources: z.array(changeSource).default([]),
    change_hooks: changeHooks.default({}),
    auth: auth.default({}),
    www: www.default({}),
    log_compression: z.enum(['none', 'gzip', 'zstd']).default('gzip'),
    // Seconds without a heartbeat after which a master is expired (Buildbot: ten minutes).
    master_expiry_seconds: z.number().int().positive().default(600),
  })
  .strict();

export type MasterConfig = z.infer<typeof masterConfigSchema>;
export type BuilderConfig = MasterConfig['builders'][number];
export type WorkerConfig = MasterConfig['workers'][number];
export type SchedulerConfig = MasterConfig['schedulers'][number];
export type ChangeHooksConfig = MasterConfig['change_hooks'];
export type AuthConfig = MasterConfig['auth'];
export type WwwConfig = MasterConfig['www'];
export type ForceSchedulerConfig = MasterConfig['force_schedulers'][number];
export type StepConfig = BuilderConfig['steps'][number];

function pathOf(path: (string | number)[]): string {
  return (
    path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p), '') ||
    '(top level)'
  );
}

function describe(issue: z.ZodIssue): string {
  const at = pathOf(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      return issue.received === 'undefined'
        ? `${at}: required, expected ${issue.expected}`
        : `${at}: expected ${issue.expected}, got ${issue.received}`;
    case 'unrecognized_keys':
      return `${at}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_enum_value':
      return `${at}: expected one of ${issue.options.join(', ')}, got ${JSON.stringify(issue.received)}`;
    default:
      return `${at}: ${issue.message}`;
  }
}

/** Cross-references the schema alone cannot check: names that must exist and be unique. */
function checkReferences(cfg: MasterConfig): string[] {
  const problems: string[] = [];
  const unique = (what: string, names: string[]) => {
    const seen = new Set<string>();
    names.forEach((n, i) => {
      if (seen.has(n)) problems.push(`${what}[${i}].name: duplicate name ${JSON.stringify(n)}`);
      seen.add(n);
    });
  };
  unique(
    'workers',
    cfg.workers.map((w) => w.name),
  );
  unique(
    'builders',
    cfg.builders.map((b) => b.name),
  );
  unique(
    'schedulers',
    cfg.schedulers.map((s) => s.name),
  );
  unique(
    'force_schedulers',
    cfg.force_schedulers.map((s) => s.name),
  );
  // A force scheduler is a scheduler too: both are one row of `schedulers`, found by name.
  const schedulerNames = new Set(cfg.schedulers.map((s) => s.name));
  cfg.force_schedulers.forEach((f, i) => {
    if (schedulerNames.has(f.name))
      problems.push(
        `force_schedulers[${i}].name: duplicate name ${JSON.stringify(f.name)} (a scheduler has it)`,
      );
  });
  const workers = new Set(cfg.workers.map((w) => w.name));
  const builders = new Set(cfg.builders.map((b) => b.name));
  const triggerables = new Set(cfg.schedulers.filter((s) => s.type === 'triggerable').map((s) => s.name));
  cfg.builders.forEach((b, i) => {
    b.workers.forEach((w, j) => {
      if (!workers.has(w))
        problems.push(`builders[${i}].workers[${j}]: no worker named ${JSON.stringify(w)}`);
    });
    b.steps.forEach((s, j) => {
      if (s.type !== 'trigger') return;
      s.schedulers.forEach((t, k) => {
        if (!triggerables.has(t)) {
          problems.push(
            `builders[${i}].steps[${j}].schedulers[${k}]: no triggerable scheduler named ${JSON.stringify(t)}`,
          );
        }
      });
    });
  });
  for (const [what, list] of [
    ['schedulers', cfg.schedulers],
    ['force_schedulers', cfg.force_schedulers],
  ] as const) {
    list.forEach((s, i) => {
      s.builders.forEach((b, j) => {
        if (!builders.has(b))
          problems.push(`${what}[${i}].builders[${j}]: no builder named ${JSON.stringify(b)}`);
      });
    });
  }
  return problems;
}

export function parseMasterConfig(text: string, source = 'master configuration'): MasterConfig {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) {
    throw new ConfigError(
      'CONFIG_YAML_SYNTAX',
      `${source} is not valid YAML`,
      doc.errors.map((e) => e.message.split('\n')[0] ?? e.message),
    );
  }
  const parsed = masterConfigSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    throw new ConfigError('CONFIG_SCHEMA', `${source} is invalid`, parsed.error.issues.map(describe));
  }
  const refs = checkReferences(parsed.data);
  if (refs.length) throw new ConfigError('CONFIG_REFERENCE', `${source} is invalid`, refs);
  return parsed.data;
}

export function loadMasterConfig(path: string): MasterConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('CONFIG_FILE_UNREADABLE', `cannot read ${path}: ${(err as Error).message}`);
  }
  return parseMasterConfig(text, path);
}

/** A worker's password, wherever the configuration says it lives. */
export function workerPassword(
  w: WorkerConfig,
  env: Record<string, string | undefined> = process.env,
): string {
  if (w.password !== undefined) return w.password;
  if (w.password_env !== undefined) {
    const v = env[w.password_env];
    if (!v)
      throw new ConfigError(
        'CONFIG_REFERENCE',
        `worker ${w.name}: environment variable ${w.password_env} is not set`,
      );
    return v;
  }
  try {
    return readFileSync(w.password_file!, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(
      'CONFIG_FILE_UNREADABLE',
      `worker ${w.name}: cannot read ${w.password_file}: ${(err as Error).message}`,
    );
  }
}
