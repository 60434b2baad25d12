// The users who may log in with a password: those of the configuration's auth.users plus
// those of auth.users_file (a mounted Secret, re-read when it changes, so a rotated Secret
// takes effect without a restart). A file that cannot be read or is invalid keeps the last
// good list and is reported once per change.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { ConfigError } from '../config/errors.js';
import { type MasterConfig, usersFileSchema } from '../config/master-config.js';

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

export class UserDirectory {
  private byName: Map<string, UserEntry>;
  private fileStamp = '';
  private checkedAt = 0;

  /** Throws ConfigError when the users file is missing or invalid at start. */
  constructor(
    private readonly inline: UserEntry[],
    private readonly file: string | undefined,
    private readonly onReloadError: (err: Error) => void = () => {},
    private readonly recheckMs = 10_000,
  ) {
    this.byName = index([inline, file ? this.readFile() : []], 'auth');
  }

  private stamp(): string {
    const st = statSync(this.file!);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  }

  private readFile(): UserEntry[] {
    let text: string;
    try {
      this.fileStamp = this.stamp();
      text = readFileSync(this.file!, 'utf8');
    } catch (err) {
      throw new ConfigError(
        'CONFIG_FILE_UNREADABLE',
        `cannot read auth.users_file: ${(err as Error).message}`,
      );
    }
    return parseUsersFile(text, 'auth.users_file');
  }

  private maybeReload(now: number): void {
    if (!this.file || now - this.checkedAt < this.recheckMs) return;
    this.checkedAt = now;
    let stamp: string;
    try {
      stamp = this.stamp();
    } catch (err) {
      this.onReloadError(err as Error);
      return;
    }
    if (stamp === this.fileStamp) return;
    try {
      this.byName = index([this.inline, this.readFile()], 'auth');
    } catch (err) {
      this.fileStamp = stamp;
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
