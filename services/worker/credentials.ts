// The worker's secret and who its build steps run as. A worker runs other people's code, so
// its password must be out of every step's reach: it is never in the agent's environment
// (a step reads its parent's initial environment from /proc/<ppid>/environ), it comes from
// a file or standard input, and the steps run, when the agent can arrange it, as another
// user who can read neither that file nor the agent's memory and /proc entries.
// (docs/security.md; test/worker/credentials.test.ts)
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../core/config/errors.js';

export interface StepUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** The password: the file's first line, or standard input's (read to its end). */
export async function readPassword(
  file: string | null,
  stdin: NodeJS.ReadStream = process.stdin,
): Promise<string> {
  let text: string;
  if (file !== null) {
    text = readFileSync(file, 'utf8');
  } else {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.from(chunk));
    text = Buffer.concat(chunks).toString('utf8');
  }
  const password = text.split(/\r?\n/)[0]!;
  if (!password) {
    throw new ConfigError(
      'CONFIG_ENV_INVALID',
      file ? `WORKER_PASSWORD_FILE: ${file} holds no password` : 'no password on standard input',
    );
  }
  return password;
}

/** WORKER_STEP_USER as a user: a name from /etc/passwd, or uid[:gid]. */
export function resolveStepUser(spec: string, passwd = '/etc/passwd'): StepUser {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(spec);
  let entry: StepUser | undefined;
  for (const line of readFileSync(passwd, 'utf8').split('\n')) {
    const [name, , uid, gid, , home] = line.split(':');
    if (name === undefined || uid === undefined || gid === undefined) continue;
    if (numeric ? uid === numeric[1] : name === spec) {
      entry = { name, uid: Number(uid), gid: Number(gid), home: home || '/' };
      break;
    }
  }
  if (numeric) {
    const uid = Number(numeric[1]);
    const gid = numeric[2] !== undefined ? Number(numeric[2]) : (entry?.gid ?? uid);
    return { name: entry?.name ?? String(uid), uid, gid, home: entry?.home ?? '/' };
  }
  if (!entry)
    throw new ConfigError('CONFIG_ENV_INVALID', `WORKER_STEP_USER: no user ${JSON.stringify(spec)}`);
  return entry;
}

/**
 * Refuses a step user that would not keep the secret: the agent must be able to switch to
 * it (root), it must not be root itself, and it must not be able to read the password file.
 */
export function checkStepUser(
  user: StepUser,
  passwordFile: string | null,
  agentUid = process.getuid?.(),
): void {
  const problems: string[] = [];
  if (agentUid !== 0)
    problems.push('WORKER_STEP_USER: the worker must run as root to run steps as another user');
  if (user.uid === 0) problems.push('WORKER_STEP_USER: steps must not run as root');
  if (passwordFile !== null) {
    const st = statSync(passwordFile);
    const readable =
      st.uid === user.uid || (st.gid === user.gid && (st.mode & 0o040) !== 0) || (st.mode & 0o004) !== 0;
    if (readable)
      problems.push(`WORKER_PASSWORD_FILE: ${passwordFile} is readable by ${user.name}, who runs the steps`);
  }
  if (problems.length) throw new ConfigError('CONFIG_ENV_INVALID', 'invalid environment', problems);
}

// The agent's own settings: a step never sees them (nor the header of its log).
const AGENT_VARIABLE = /^(WORKER_|MASTER_|OTEL_)|^PROBE_PORT$/;

/** The environment steps start from: the host's, without the agent's own variables. */
export function stepBaseEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !AGENT_VARIABLE.test(k)) out[k] = v;
  return out;
}
