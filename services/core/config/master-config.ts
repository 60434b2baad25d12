// The master's YAML configuration: builders, workers and their protocols, schedulers, force schedulers, change
// sources and hooks, auth and www. The schema is the documentation of every key; a mistake is reported with the
// path of the bad key and what was expected there.
// Each section's schema is in master-config/; this file composes them, parses and loads.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { artifacts } from './master-config/artifacts.js';
import { auth } from './master-config/auth.js';
import { builder } from './master-config/builders.js';
import { changeHooks } from './master-config/change-hooks.js';
import { changeSource } from './master-config/change-sources.js';
import { codebase } from './master-config/codebases.js';
import { forceScheduler } from './master-config/force-schedulers.js';
import { ignoredTopLevel } from './master-config/ignored-keys.js';
import { lock } from './master-config/locks.js';
import { masterShellProblems } from './master-config/master-steps.js';
import { objectStore } from './master-config/object-store.js';
import { project } from './master-config/projects.js';
import { protocols } from './master-config/protocols.js';
import { reporter } from './master-config/reporters/index.js';
import { retention } from './master-config/retention.js';
import { scheduler } from './master-config/schedulers.js';
import { secretsProvider } from './master-config/secrets.js';
import { service } from './master-config/services.js';
import { gitStepProblems } from './master-config/source-steps.js';
import { triggerProblems } from './master-config/steps.js';
import { fileDownloadProblems } from './master-config/transfer-steps.js';
import { worker } from './master-config/workers.js';
import { www } from './master-config/www.js';
import { yamlData } from './yaml-data.js';

export { ENDPOINT_MATCHERS, userSchema, usersFileSchema } from './master-config/auth.js';
export { builderDir } from './master-config/builders.js';
export type {
  ChangeSourceConfig,
  PbChangeSourceConfig,
  PolledChangeSourceConfig,
} from './master-config/change-sources.js';
export type { ForceParameterConfig } from './master-config/force-schedulers.js';
export { ignoredKeys } from './master-config/ignored-keys.js';
export type {
  FormatterConfig,
  GeneratorConfig,
  ReporterConfig,
  ReportMode,
} from './master-config/reporters/index.js';

export const masterConfigSchema = z
  .object({
    title: z.string().default('Flotilla'),
    // The web UI's address, for the links in reports and to artifacts (Buildbot's c['buildbotURL'], and its default).
    buildbotURL: z
      .string()
      .url()
      .default('http://localhost:8080/')
      .transform((u) => (u.endsWith('/') ? u : `${u}/`)),
    workers: z.array(worker).default([]),
    // Buildbot's c['properties']: properties every build starts with, under all others.
    properties: z.record(z.unknown()).default({}),
    protocols: protocols.default({}),
    locks: z.array(lock).default([]),
    // Buildbot 4.3's c['projects'] (master-config/projects.ts).
    projects: z.array(project).default([]),
    // Buildbot 4.3's c['codebases'] (master-config/codebases.ts).
    codebases: z.array(codebase).default([]),
    builders: z.array(builder).default([]),
    schedulers: z.array(scheduler).default([]),
    force_schedulers: z.array(forceScheduler).default([]),
    change_sources: z.array(changeSource).default([]),
    change_hooks: changeHooks.default({}),
    reporters: z.array(reporter).default([]),
    // Buildbot's c['services'] other than reporters: the old build canceller (master-config/services.ts).
    services: z.array(service).default([]),
    secrets: z.array(secretsProvider).default([]),
    auth: auth.default({}),
    www: www.default({}),
    log_compression: z.enum(['none', 'gzip', 'zstd']).default('gzip'),
    // How much uploads may store: a default maxsize and a quota per build (master-config/artifacts.ts).
    artifacts: artifacts.default({}),
    // What the cleanup job deletes and when (master-config/retention.ts, docs/retention.md);
    // nothing configured, everything is kept.
    retention: retention.default({}),
    // Where finished logs and artifacts move out of PostgreSQL to (master-config/object-store.ts,
    // docs/object-store.md); not set, they stay in PostgreSQL.
    object_store: objectStore.optional(),
    // Seconds without a heartbeat after which a master is expired (Buildbot: ten minutes).
    master_expiry_seconds: z.number().int().positive().default(600),
    // Seconds a worker waits without hearing from its master before it kills that master's
    // commands (default a quarter of the expiry, at most 30). Must leave a master's commands
    // dead before the cluster can expire it: checked at start (services/master/liveness.ts).
    worker_silence_seconds: z.number().positive().optional(),
    // Seconds a master rides out a database it cannot reach, its builds running and their
    // output held back, before it kills their commands and they end RETRY (default 60, at most
    // the expiry less 3): beyond it, the cluster may expire this master.
    database_outage_seconds: z.number().positive().optional(),
    // Buildbot keys with no meaning here: accepted, ignored, named at start (ignored-keys.ts).
    ...ignoredTopLevel,
  })
  .strict();

export type MasterConfig = z.infer<typeof masterConfigSchema>;
export type BuilderConfig = MasterConfig['builders'][number];
export type WorkerConfig = MasterConfig['workers'][number];
export type SchedulerConfig = MasterConfig['schedulers'][number];
export type ChangeHooksConfig = MasterConfig['change_hooks'];
export type AuthConfig = MasterConfig['auth'];
export type WwwConfig = MasterConfig['www'];
export type RetentionConfig = MasterConfig['retention'];
export type { ObjectStoreConfig } from './master-config/object-store.js';
export type ProtocolsConfig = MasterConfig['protocols'];
export type ServiceConfig = MasterConfig['services'][number];
export type ForceSchedulerConfig = MasterConfig['force_schedulers'][number];
export type StepConfig = BuilderConfig['steps'][number];
export type LockConfig = MasterConfig['locks'][number];
export type { LockAccessConfig } from './master-config/locks.js';
export type SecretsProviderConfig = MasterConfig['secrets'][number];
export type { Condition } from './master-config/step-common.js';
export type Renderable = string | { interpolate: string; kw: Record<string, unknown> };

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
    'services',
    cfg.services.map((s) => s.name),
  );
  unique(
    'projects',
    cfg.projects.map((p) => p.name),
  );
  const projects = new Set(cfg.projects.map((p) => p.name));
  cfg.builders.forEach((b, i) => {
    if (b.project !== undefined && !projects.has(b.project))
      problems.push(`builders[${i}].project: no project named ${JSON.stringify(b.project)}`);
  });
  // Buildbot 4.3 fails its reconfiguration on a codebase whose project is not configured
  // (botmaster.reconfig_codebases), and a GitPoller's start on one (gitpoller.py).
  const codebaseKeys = new Set<string>();
  cfg.codebases.forEach((c, i) => {
    if (!projects.has(c.project))
      problems.push(`codebases[${i}].project: no project named ${JSON.stringify(c.project)}`);
    const key = JSON.stringify([c.project, c.name]);
    if (codebaseKeys.has(key))
      problems.push(
        `codebases[${i}].name: duplicate name ${JSON.stringify(c.name)} in project ${JSON.stringify(c.project)}`,
      );
    codebaseKeys.add(key);
  });
  cfg.change_sources.forEach((c, i) => {
    if (c.type === 'pb' || typeof c.codebase === 'string') return;
    if (!projects.has(c.codebase.project))
      problems.push(
        `change_sources[${i}].codebase.project: no project named ${JSON.stringify(c.codebase.project)}`,
      );
  });
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
  // Two protocols on one port (port 0 is any free port, never a clash).
  const ports = Object.entries(cfg.protocols) as [string, { port: number }][];
  ports.forEach(([name, at], i) => {
    const first = ports.slice(0, i).find(([, a]) => a.port === at.port && at.port !== 0);
    if (first) problems.push(`protocols.${name}.port: port ${at.port} is the ${first[0]} protocol's too`);
  });
  // A PB change source logs in on the workers' PB port (Buildbot's default when it names
  // none); a port of its own is not offered.
  cfg.change_sources.forEach((c, i) => {
    if (c.type !== 'pb') return;
    if (!cfg.protocols.pb)
      problems.push(`change_sources[${i}]: a pb change source needs protocols.pb (the port it logs in on)`);
    else if (c.port && c.port.port !== cfg.protocols.pb.port)
      problems.push(`change_sources[${i}].port: must be protocols.pb's port (${cfg.protocols.pb.port})`);
    // One login per name on a PB port, as Buildbot's pbmanager.
    if (cfg.workers.some((w) => w.name === c.user))
      problems.push(`change_sources[${i}].user: ${JSON.stringify(c.user)} is a worker's name`);
  });
  // Try_Userpass users log in on the same port, each username once (Buildbot's pbmanager).
  const pbUsers = new Set(cfg.change_sources.flatMap((c) => (c.type === 'pb' ? [c.user] : [])));
  cfg.schedulers.forEach((s, i) => {
    if (s.type !== 'try_userpass') return;
    if (!cfg.protocols.pb)
      problems.push(`schedulers[${i}]: a try_userpass scheduler needs protocols.pb (the port it logs in on)`);
    else if (s.port && s.port.port !== cfg.protocols.pb.port)
      problems.push(`schedulers[${i}].port: must be protocols.pb's port (${cfg.protocols.pb.port})`);
    s.userpass.forEach(([user], j) => {
      if (cfg.workers.some((w) => w.name === user))
        problems.push(`schedulers[${i}].userpass[${j}]: ${JSON.stringify(user)} is a worker's name`);
      else if (pbUsers.has(user))
        problems.push(
          `schedulers[${i}].userpass[${j}]: ${JSON.stringify(user)} logs in on the PB port already`,
        );
      pbUsers.add(user);
    });
  });
  unique(
    'change_sources',
    cfg.change_sources.map((c) => c.name),
  );
  const workers = new Set(cfg.workers.map((w) => w.name));
  const builders = new Set(cfg.builders.map((b) => b.name));
  const triggerables = new Set(cfg.schedulers.filter((s) => s.type === 'triggerable').map((s) => s.name));
  unique(
    'locks',
    cfg.locks.map((l) => l.name),
  );
  const locks = new Set(cfg.locks.map((l) => l.name));
  cfg.locks.forEach((l, i) => {
    for (const w of Object.keys(l.maxCountForWorker))
      if (!workers.has(w))
        problems.push(`locks[${i}].maxCountForWorker.${w}: no worker named ${JSON.stringify(w)}`);
  });
  cfg.builders.forEach((b, i) => {
    const builderLocks = new Set(b.locks.map((a) => a.lock));
    b.locks.forEach((a, j) => {
      if (!locks.has(a.lock))
        problems.push(`builders[${i}].locks[${j}]: no lock named ${JSON.stringify(a.lock)}`);
    });
    b.steps.forEach((s, j) => {
      if (s.type === 'git')
        for (const p of gitStepProblems(s)) problems.push(`builders[${i}].steps[${j}].${p}`);
      if (s.type === 'file_download')
        for (const p of fileDownloadProblems(s)) problems.push(`builders[${i}].steps[${j}].${p}`);
      if (s.type === 'trigger')
        for (const p of triggerProblems(s)) problems.push(`builders[${i}].steps[${j}].${p}`);
      if (s.type === 'master_shell')
        for (const p of masterShellProblems(s)) problems.push(`builders[${i}].steps[${j}].${p}`);
      s.locks.forEach((a, k) => {
        const at = `builders[${i}].steps[${j}].locks[${k}]`;
        if (!locks.has(a.lock)) problems.push(`${at}: no lock named ${JSON.stringify(a.lock)}`);
        // Buildbot refuses this when the step starts ("lock claimed by both Step and Build").
        else if (builderLocks.has(a.lock))
          problems.push(`${at}: lock ${JSON.stringify(a.lock)} is the builder's already`);
      });
    });
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
  // Buildbot refuses a Dependent whose upstream is not a scheduler; a force scheduler is one.
  const upstreams = new Set([...schedulerNames, ...cfg.force_schedulers.map((f) => f.name)]);
  cfg.schedulers.forEach((s, i) => {
    if (s.type !== 'dependent') return;
    if (!upstreams.has(s.upstream) || s.upstream === s.name)
      problems.push(`schedulers[${i}].upstream: no other scheduler named ${JSON.stringify(s.upstream)}`);
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
  cfg.reporters.forEach((r, i) => {
    r.generators?.forEach((g, j) => {
      g.builders?.forEach((b, k) => {
        if (!builders.has(b))
          problems.push(
            `reporters[${i}].generators[${j}].builders[${k}]: no builder named ${JSON.stringify(b)}`,
          );
      });
    });
  });
  unique('reporters', cfg.reporters.map(reporterName));
  return problems;
}

/** A reporter's name: its own, else its type. */
export const reporterName = (r: MasterConfig['reporters'][number]): string => r.name ?? r.type;

export function parseMasterConfig(text: string, source = 'master configuration'): MasterConfig {
  const yaml = yamlData(text);
  if (!yaml.ok) throw new ConfigError('CONFIG_YAML_SYNTAX', `${source} is not valid YAML`, yaml.errors);
  const parsed = masterConfigSchema.safeParse(yaml.data ?? {});
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
