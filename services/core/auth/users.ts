// The users who may log in with a password: those of the configuration's auth.users plus
// those of auth.users_file and auth.htpasswd_file (mounted Secrets, re-read when they change,
// so a rotated Secret takes effect without a restart). A file that cannot be read or is invalid keeps the last
// good list and is reported once per change.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { ConfigError } from '../config/errors.js';
import { type MasterConfig, usersFileSchema } from '../config/master-config.js';
import { parseHtpasswd } from './htpasswd.js';

export type UserEntry = MasterConfig['auth']['users'][number];

/** What a login stores in the session, Buildbot's user_info. */
export interface UserInfo {
  username: string;
  email: string;
  full_name?: string;
  groups: string[];
}

export function userInfoOf(u: UserEntry): UserInfo {
  return {
    username: u.username,
    email: u.email ?? u.username,
    ...(u.full_name !== undefined ? { full_name: u.full_name } : {}),
    groups: [...u.groups],
  };
}

/**
 * What a session started by a password login depends on: a change of the password, the
 * groups, the email or the name changes this, and ends the user's sessions.
 */
export function fingerprintOf(u: UserEntry): string {
  const parts = [u.username, u.password_hash, u.email ?? '', u.full_name ?? '', JSON.stringify(u.groups)];
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

export function parseUsersFile(text: string, source: string): UserEntry[] {
  const doc = parseDocument(text);
  if (doc.errors.length) {
    throw new ConfigError('CONFIG_YAML_SYNTAX', `${source} is not valid YAML`, [
      doc.errors[0]!.message.split('\n')[0]!,
    ]);
  }
  const parsed = usersFileSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    throw new ConfigError(
      'CONFIG_SCHEMA',
      `${source} is invalid`,
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    );
  }
  return parsed.data.users;
}

function index(lists: UserEntry[][], source: string): Map<string, UserEntry> {
  const byName = new Map<string, UserEntry>();
  for (const u of lists.flat()) {
    if (byName.has(u.username)) {
      throw new ConfigError(
        'CONFIG_REFERENCE',
        `${source}: user ${JSON.stringify(u.username)} is listed twice`,
      );
    }
    byName.set(u.username, u);
  }
  return byName;
}

/** A file of users re-read when it changes: the users file (YAML) or an htpasswd file. */
interface UserFile {
  /** Its configuration key, for messages. */
  key: string;
  path: string;
  parse(text: string, source: string): UserEntry[];
  stamp: string;
  users: UserEntry[];
}

export class UserDirectory {
  private byName: Map<string, UserEntry>;
  private readonly files: UserFile[];
  private checkedAt = 0;

  /** Throws ConfigError when a users file (or the htpasswd file) is missing or invalid at start. */
  constructor(
    private readonly inline: UserEntry[],
    file: string | undefined,
    private readonly onReloadError: (err: Error) => void = () => {},
    private readonly recheckMs = 10_000,
    htpasswdFile?: string,
  ) {
    const files: Omit<UserFile, 'stamp' | 'users'>[] = [];
    if (file) files.push({ key: 'auth.users_file', path: file, parse: parseUsersFile });
    if (htpasswdFile) files.push({ key: 'auth.htpasswd_file', path: htpasswdFile, parse: parseHtpasswd });
    this.files = files.map((f) => ({ ...f, stamp: '', users: [] }));
    for (const f of this.files) this.read(f);
    this.byName = this.indexAll();
  }

  private indexAll(): Map<string, UserEntry> {
    return index([this.inline, ...this.files.map((f) => f.users)], 'auth');
  }

  private static stamp(path: string): string {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  }

  private read(f: UserFile): void {
    let text: string;
    try {
      f.stamp = UserDirectory.stamp(f.path);
      text = readFileSync(f.path, 'utf8');
    } catch (err) {
      throw new ConfigError('CONFIG_FILE_UNREADABLE', `cannot read ${f.key}: ${(err as Error).message}`);
    }
    f.users = f.parse(text, f.key);
  }

  private maybeReload(now: number): void {
    if (this.files.length === 0 || now - this.checkedAt < this.recheckMs) return;
    this.checkedAt = now;
    let changed = false;
    for (const f of this.files) {
      let stamp: string;
      try {
        stamp = UserDirectory.stamp(f.path);
      } catch (err) {
        this.onReloadError(err as Error);
        continue;
      }
      if (stamp === f.stamp) continue;
      const before = f.users;
      try {
        this.read(f);
        changed = true;
      } catch (err) {
        f.stamp = stamp;
        f.users = before;
        this.onReloadError(err as Error);
      }
    }
    if (!changed) return;
    try {
      this.byName = this.indexAll();
    } catch (err) {
      this.onReloadError(err as Error);
    }
  }

  get size(): number {
    return this.byName.size;
  }

  /** A configured user's hash, whose costs an unknown user's check should match. */
  sampleHash(): string | null {
    return this.byName.values().next().value?.password_hash ?? null;
  }

  find(username: string, now = Date.now()): UserEntry | undefined {
    this.maybeReload(now);
    return this.byName.get(username);
  }
}
