// The sessions that may still be used, in Redis so that every API pod sees the same: a
// login records its session id (the cookie's `jti`) until the cookie expires, a logout
// deletes it, and a cookie whose id is no longer recorded counts as no session, on every
// pod at once. The record names the user and, for a password login, a fingerprint of the
// user's entry (password hash, groups, email, name), so that a session ends when the user's
// password, groups or existence change (checked on each request: docs/security.md).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisInTime } from './counters.js';

export interface SessionRecord {
  /** The user name the session was started for. */
  user: string;
  /** How: a password (checked against the users' entries on each request) or a token. */
  via: 'password' | 'token' | 'remote-user' | 'oauth2';
  /** For a password login: the fingerprint of the user's entry then. */
  fingerprint: string | null;
}

const TIMEOUT_MS = 500;

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}session:${id}`;
  }

  /** A new session id: 128 random bits. */
  newId(): string {
    return randomBytes(16).toString('base64url');
  }

  /** Records a session for `ttlSeconds` (the cookie's lifetime). Throws RedisUnavailable. */
  async start(id: string, record: SessionRecord, ttlSeconds: number): Promise<void> {
    await redisInTime(this.redis.set(this.key(id), JSON.stringify(record), 'EX', ttlSeconds), TIMEOUT_MS);
  }

  /** The session's record; null once it ended (or never was). Throws RedisUnavailable. */
  async lookup(id: string): Promise<SessionRecord | null> {
    const raw = await redisInTime(this.redis.get(this.key(id)), TIMEOUT_MS);
    if (raw === null) return null;
    try {
      return JSON.parse(raw) as SessionRecord;
    } catch {
      return null;
    }
  }

  /** Ends a session on every pod. Throws RedisUnavailable. */
  async end(id: string): Promise<void> {
    await redisInTime(this.redis.del(this.key(id)), TIMEOUT_MS);
  }
}
