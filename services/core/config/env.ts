// The typed environment of every process. Each service reads only the part it needs;
// defaults suit the local stack (deploy/local) and every value can be overridden.
import { accessSync, constants } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSentinelList, type RedisTarget } from '../redis.js';
import { ConfigError } from './errors.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface CommonEnv {
  databaseUrl: string;
  /**
   * REDIS_URL (one server), or, when REDIS_SENTINELS is set, the Sentinel deployment it names
   * (REDIS_SENTINEL_NAME, REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD).
   */
  redis: RedisTarget;
  logLevel: LogLevel;
  /** Port of the small /healthz, /readyz, /metrics server (master and worker). */
  probePort: number;
  /** Bind address for every listener; loopback by default, 0.0.0.0 in containers. */
  host: string;
  /**
   * MIGRATE_ON_START: apply the migrations this code knows at start (api, master); otherwise a
   * database that lacks one is refused at start, naming `npm run migrate`.
   */
  migrateOnStart: boolean;
  /**
   * DATABASE_POOL_SIZE: connections the process's pool opens to PostgreSQL at most (api,
   * master; default 10). The readiness check has one of its own besides (core/health.ts).
   */
  databasePoolSize: number;
}

export interface ApiEnv extends CommonEnv {
  port: number;
  /** Public URL of the service, used in links (Buildbot's buildbotURL). */
  publicUrl: string;
  /** The masters' YAML configuration, for what API pods serve from it (force forms, auth). */
  masterConfigPath: string | null;
  /**
   * SESSION_SECRET: when set, the secret that signs session cookies, written over the one in
   * object_state (so a Buildbot master on the same database signs with it too); when not,
   * the one in object_state, created as Buildbot creates it.
   */
  sessionSecret: string | null;
  /** Where API pods read from, besides the primary (docs/scaling.md, "PostgreSQL read replicas"). */
  readReplicas: ReadReplicasEnv;
}

export interface ReadReplicasEnv {
  /** DATABASE_READ_URL: streaming replicas of DATABASE_URL, comma-separated; empty: reads go to the primary. */
  urls: string[];
  /**
   * DATABASE_READ_WAIT_SECONDS: how long a read that must see a client's own write waits for a
   * replica to replay it before it goes to the primary.
   */
  waitSeconds: number;
  /** DATABASE_READ_MAX_LAG_SECONDS: a replica further behind the primary than this serves no reads. */
  maxLagSeconds: number;
}

export interface MasterEnv extends CommonEnv {
  configPath: string;
  masterName: string;
  /** Port the master listens on for worker connections (Flotilla's protocol, unless its configuration names one). */
  workerPort: number;
  /**
   * Port of Buildbot's msgpack_experimental_v7 when the configuration turns it on, instead of
   * the configuration's (several masters on one host); null: the configuration's.
   */
  msgpackWorkerPort: number | null;
  /** Port of Buildbot's PB when the configuration turns it on, instead of the configuration's; null: the configuration's. */
  pbWorkerPort: number | null;
  /** PEM files of the worker listener's certificate and key: workers then connect with wss://. */
  workerTls: { certFile: string; keyFile: string } | null;
  /** Where the master keeps scratch files (git pollers' mirrors); nothing in it must survive. */
  workdir: string;
  /** How long a stopping master lets its running builds finish before handing them back. */
  drainSeconds: number;
}

export interface WorkerEnv {
  logLevel: LogLevel;
  probePort: number;
  host: string;
  masterUrl: string;
  workerName: string;
  /**
   * WORKER_PASSWORD_FILE: the file holding the worker's password; null: it comes on standard
   * input. Never the environment: every process the worker starts could read the agent's
   * initial environment from /proc/<pid>/environ.
   */
  passwordFile: string | null;
  /**
   * WORKER_STEP_USER: the user (name or uid[:gid]) steps run as, when the agent runs as root,
   * so that they cannot read the agent's password, memory or /proc entries.
   */
  stepUser: string | null;
  workdir: string;
  /** PEM file of the authority a wss:// master's certificate is checked against (else the system's). */
  masterCaFile: string | null;
}

type Source = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly src: Source) {}

  string(name: string, fallback?: string): string {
    const v = this.src[name];
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    this.problems.push(`${name}: required, not set`);
    return '';
  }

  /** A value that may be left unset (or empty): null then. */
  optional(name: string): string | null {
    const v = this.src[name];
    return v === undefined || v === '' ? null : v;
  }

  url(name: string, protocols: readonly string[], fallback?: string): string {
    const v = this.string(name, fallback);
    if (!v) return v;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) {
        this.problems.push(`${name}: expected a ${protocols.join(' or ')} URL, got ${u.protocol}//...`);
      }
    } catch {
      this.problems.push(`${name}: expected a URL, got ${JSON.stringify(redact(v))}`);
    }
    return v;
  }

  port(name: string, fallback: number): number {
    const raw = this.src[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      this.problems.push(`${name}: expected a port number 0-65535, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }

  /** A whole number, one or more. */
  count(name: string, fallback: number): number {
    const raw = this.src[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) {
      this.problems.push(`${name}: expected a whole number, 1 or more, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }

  /** A number of seconds, zero or more (fractions allowed). */
  seconds(name: string, fallback: number): number {
    const raw = this.src[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) {
      this.problems.push(`${name}: expected a number of seconds, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }

  /** An optional path to a file this process must be able to read. */
  file(name: string): string | null {
    const v = this.src[name];
    if (v === undefined || v === '') return null;
    try {
      accessSync(v, constants.R_OK);
    } catch {
      this.problems.push(`${name}: cannot read ${JSON.stringify(v)}`);
    }
    return v;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.src[name];
    if (raw === undefined || raw === '') return fallback;
    const v = { true: true, '1': true, yes: true, false: false, '0': false, no: false }[raw.toLowerCase()];
    if (v === undefined) {
      this.problems.push(`${name}: expected true or false, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return v;
  }

  logLevel(): LogLevel {
    const raw = (this.src.LOG_LEVEL ?? 'info').toLowerCase();
    if (!LOG_LEVELS.includes(raw as LogLevel)) {
      this.problems.push(`LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(raw)}`);
      return 'info';
    }
    return raw as LogLevel;
  }

  done<T>(value: T): T {
    if (this.problems.length)
      throw new ConfigError('CONFIG_ENV_INVALID', 'invalid environment', this.problems);
    return value;
  }
}

/** Hide a password in a connection string before it reaches a message. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
}

const DEFAULT_DB = 'postgresql://flotilla:flotilla@127.0.0.1:5432/flotilla';
const DEFAULT_REDIS = 'redis://127.0.0.1:6379';

function common(r: Reader, probeDefault: number): CommonEnv {
  return {
    databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:'], DEFAULT_DB),
    redis: redisTarget(r),
    logLevel: r.logLevel(),
    probePort: r.port('PROBE_PORT', probeDefault),
    host: r.string('HOST', '127.0.0.1'),
    migrateOnStart: r.boolean('MIGRATE_ON_START', false),
    databasePoolSize: r.count('DATABASE_POOL_SIZE', 10),
  };
}

// Sentinel when REDIS_SENTINELS is set; then REDIS_URL must not be (which one would win is
// not something an operator should have to guess).
function redisTarget(r: Reader): RedisTarget {
  const list = r.optional('REDIS_SENTINELS');
  if (list === null) return r.url('REDIS_URL', ['redis:', 'rediss:'], DEFAULT_REDIS);
  if (r.optional('REDIS_URL') !== null) r.problems.push('REDIS_URL and REDIS_SENTINELS: set one, not both');
  const { sentinels, problems } = parseSentinelList(list);
  for (const p of problems) r.problems.push(`REDIS_SENTINELS: ${p}`);
  const password = r.optional('REDIS_PASSWORD');
  const sentinelPassword = r.optional('REDIS_SENTINEL_PASSWORD');
  return {
    sentinels,
    masterName: r.string('REDIS_SENTINEL_NAME'),
    ...(password !== null ? { password } : {}),
    ...(sentinelPassword !== null ? { sentinelPassword } : {}),
  };
}

export function loadApiEnv(src: Source = process.env): ApiEnv {
  const r = new Reader(src);
  const c = common(r, 0);
  const port = r.port('PORT', 8010);
  const publicUrl = r.url('PUBLIC_URL', ['http:', 'https:'], `http://127.0.0.1:${port}/`);
  const masterConfigPath = src.MASTER_CONFIG ? src.MASTER_CONFIG : null;
  const sessionSecret = src.SESSION_SECRET ? src.SESSION_SECRET : null;
  if (sessionSecret !== null && sessionSecret.length < 32) {
    r.problems.push('SESSION_SECRET: expected at least 32 characters');
  }
  return r.done({
    ...c,
    port,
    publicUrl: publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`,
    masterConfigPath,
    sessionSecret,
    readReplicas: readReplicas(r, c.databaseUrl),
  });
}

/**
 * DATABASE_READ_URL: one or more PostgreSQL URLs, separated by commas (a comma cannot appear
 * unescaped in a URL's host, user or password). Each must be a postgres URL, named once, and
 * not DATABASE_URL itself (the primary already serves what the replicas cannot).
 */
export function parseReadUrls(raw: string, primaryUrl: string): { urls: string[]; problems: string[] } {
  const urls: string[] = [];
  const problems: string[] = [];
  const entries = raw.split(',').map((e) => e.trim());
  for (const [i, entry] of entries.entries()) {
    const where = `entry ${i + 1}`;
    if (entry === '') {
      problems.push(`${where} is empty (expected URLs separated by single commas)`);
      continue;
    }
    let u: URL;
    try {
      u = new URL(entry);
    } catch {
      problems.push(`${where}: expected a URL, got ${JSON.stringify(redact(entry))}`);
      continue;
    }
    if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
      problems.push(`${where}: expected a postgres or postgresql URL, got ${u.protocol}//...`);
      continue;
    }
    if (urls.includes(entry)) {
      problems.push(`${where}: ${redact(entry)} is named twice`);
      continue;
    }
    if (entry === primaryUrl) {
      problems.push(`${where}: is DATABASE_URL itself; name only replicas`);
      continue;
    }
    urls.push(entry);
  }
  return { urls, problems };
}

function readReplicas(r: Reader, primaryUrl: string): ReadReplicasEnv {
  const raw = r.optional('DATABASE_READ_URL');
  let urls: string[] = [];
  if (raw !== null) {
    const parsed = parseReadUrls(raw, primaryUrl);
    for (const p of parsed.problems) r.problems.push(`DATABASE_READ_URL: ${p}`);
    urls = parsed.urls;
  }
  const waitSeconds = r.seconds('DATABASE_READ_WAIT_SECONDS', 1);
  // 30 s: an idle primary can hold its last records back from replicas for up to 15 s (the
  // next standby snapshot flushes them), which must not look like a replica falling behind.
  const maxLagSeconds = r.seconds('DATABASE_READ_MAX_LAG_SECONDS', 30);
  if (maxLagSeconds === 0) r.problems.push('DATABASE_READ_MAX_LAG_SECONDS: expected more than 0');
  return { urls, waitSeconds, maxLagSeconds };
}

export function loadMasterEnv(src: Source = process.env): MasterEnv {
  const r = new Reader(src);
  const c = common(r, 8011);
  const configPath = r.string('MASTER_CONFIG');
  return r.done({
    ...c,
    configPath,
    // Buildbot names a master host:basedir; in Kubernetes MASTER_NAME is the StatefulSet pod name.
    masterName: r.string('MASTER_NAME', `${hostname()}:${process.cwd()}`),
    workerPort: r.port('WORKER_PORT', 9989),
    msgpackWorkerPort: src.MSGPACK_WORKER_PORT ? r.port('MSGPACK_WORKER_PORT', 0) : null,
    pbWorkerPort: src.PB_WORKER_PORT ? r.port('PB_WORKER_PORT', 0) : null,
    workerTls: workerTls(r),
    workdir: r.string('MASTER_WORKDIR', join(tmpdir(), 'flotilla-master')),
    drainSeconds: r.seconds('MASTER_DRAIN_SECONDS', 60),
  });
}

export function loadWorkerEnv(src: Source = process.env): WorkerEnv {
  const r = new Reader(src);
  if (src.WORKER_PASSWORD !== undefined) {
    r.problems.push(
      'WORKER_PASSWORD: not taken from the environment, where every build step could read it ' +
        '(/proc/<pid>/environ); give WORKER_PASSWORD_FILE, or the password on standard input',
    );
  }
  return r.done({
    logLevel: r.logLevel(),
    probePort: r.port('PROBE_PORT', 8012),
    host: r.string('HOST', '127.0.0.1'),
    masterUrl: r.url('MASTER_URL', ['ws:', 'wss:'], 'ws://127.0.0.1:9989/worker'),
    workerName: r.string('WORKER_NAME'),
    passwordFile: r.file('WORKER_PASSWORD_FILE'),
    stepUser: src.WORKER_STEP_USER ? src.WORKER_STEP_USER : null,
    workdir: r.string('WORKER_DIR', `${process.cwd()}/.data/worker`),
    masterCaFile: r.file('MASTER_CA_FILE'),
  });
}

function workerTls(r: Reader): MasterEnv['workerTls'] {
  const certFile = r.file('WORKER_TLS_CERT_FILE');
  const keyFile = r.file('WORKER_TLS_KEY_FILE');
  if ((certFile === null) !== (keyFile === null)) {
    r.problems.push('WORKER_TLS_CERT_FILE and WORKER_TLS_KEY_FILE: set both or neither');
    return null;
  }
  return certFile && keyFile ? { certFile, keyFile } : null;
}
