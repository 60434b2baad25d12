// Review issue 13, finding 6 (medium): sessions can be ended. A cookie copied before /auth/logout
// still worked afterwards, and a user removed from the configuration kept forcing builds with the
// old cookie for its whole 7 days. Now:
// - logout ends the session on every pod (its id, the cookie's `jti`, is dropped from Redis);
// - a change of the user's password, groups or existence ends the user's sessions: at once
//   on a pod with the new configuration, within the users file's recheck (10 s) for a
//   mounted users file;
// - the lifetime is configurable, one day by default;
// - a Buildbot master on the same database still accepts a live cookie (its own session
//   code, from Debian's buildbot package, decodes ours).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { MasterConfig } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { eventually, waitFor } from '../../helpers/wait.js';
import { WsClient } from '../events/lib.js';
import { ReviewStack, sessionOf } from '../lib/review-stack.js';
import { claimsOf } from './lib.js';

let stack: ReviewStack;
beforeAll(async () => {
  stack = await ReviewStack.start();
});
afterAll(async () => {
  await stack?.close();
});

/** Another API pod on the same database and Redis (same key prefix), its configuration patched. */
function pod(patch?: (c: MasterConfig) => void): Promise<ReviewStack> {
  return ReviewStack.start({ db: stack.db, redis: stack.redis, keyPrefix: stack.keyPrefix, patch });
}

const who = async (s: ReviewStack, session: string) => (await s.get('/config', { session })).json().user;
const forces = async (s: ReviewStack, session: string) =>
  (await s.rpc('/forceschedulers/force-runtests', 'force', {}, { session })).status;

describe('logout', () => {
  it('a cookie copied before the logout is anonymous afterwards, on every pod', async () => {
    const other = await pod();
    try {
      const copied = await stack.login('admin');
      expect((await who(other, copied)).username).toBe('admin');
      expect(await forces(other, copied)).toBe(200);
      const out = await stack.get('/auth/logout', { session: copied });
      expect(out.status).toBe(302);
      expect(claimsOf(sessionOf(out)!).user_info).toEqual({ anonymous: true });
      for (const s of [stack, other]) {
        expect(await who(s, copied)).toEqual({ anonymous: true });
        expect(await forces(s, copied)).toBe(403);
      }
      // The answer replaces the dead cookie with an anonymous one.
      const again = await other.get('/config', { session: copied });
      expect(claimsOf(sessionOf(again)!).user_info).toEqual({ anonymous: true });
    } finally {
      await other.close();
    }
  });

  it('disconnects the websockets that came with the session, on every pod', async () => {
    const other = await pod((c) => {
      c.www.events.session_check_seconds = 0.2;
    });
    try {
      const url = `${(await other.listen()).replace('http', 'ws')}/ws`;
      const admin = await stack.login('admin');
      const mine = await WsClient.open(url, { headers: { cookie: `TWISTED_SESSION=${admin}` } });
      const anon = await WsClient.open(url);
      await mine.subscribe('builds/*/*');
      await stack.get('/auth/logout', { session: admin });
      await waitFor('the socket of the ended session to close', () => mine.closed !== null, {
        everyMs: 5,
        timeoutMs: 10_000,
      });
      expect(mine.closed).toEqual({ code: 1008, reason: 'the session ended' });
      expect(anon.closed).toBeNull();
      anon.close();
    } finally {
      await other.close();
    }
  });

  it("ends that session only: the user's others go on", async () => {
    const [one, two] = [await stack.login('dev'), await stack.login('dev')];
    await stack.get('/auth/logout', { session: one });
    expect(await who(stack, one)).toEqual({ anonymous: true });
    expect((await who(stack, two)).username).toBe('dev');
  });
});

describe('a change of the user ends their sessions', () => {
  const user = (c: MasterConfig, name: string) => c.auth.users.find((u) => u.username === name)!;

  it.each([
    [
      'removed from the configuration',
      (c: MasterConfig) => void c.auth.users.splice(c.auth.users.indexOf(user(c, 'dev')), 1),
    ],
    [
      'given another password',
      (c: MasterConfig) => {
        user(c, 'dev').password_hash = user(c, 'guest').password_hash;
      },
    ],
    [
      'moved to other groups',
      (c: MasterConfig) => {
        user(c, 'dev').groups = ['admins'];
      },
    ],
  ])('%s: its cookie is anonymous on a pod with the new configuration', async (_what, patch) => {
    const dev = await stack.login('dev');
    const changed = await pod(patch);
    try {
      expect(await who(changed, dev)).toEqual({ anonymous: true });
      expect(await forces(changed, dev)).toBe(403);
      // Ended for good: a pod that still has the old configuration does not honour it either.
      expect(await who(stack, dev)).toEqual({ anonymous: true });
    } finally {
      await changed.close();
    }
  });

  it('in a users file (a mounted Secret): within the recheck interval, without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-users-'));
    const file = join(dir, 'users.yaml');
    try {
      const config = stack.config.auth.users.filter((u) => u.username === 'dev');
      writeFileSync(file, stringify({ users: config }));
      const s = await pod((c) => {
        c.auth.users = c.auth.users.filter((u) => u.username !== 'dev');
        c.auth.users_file = file;
      });
      try {
        const dev = await s.login('dev');
        expect((await who(s, dev)).username).toBe('dev');
        writeFileSync(file, stringify({ users: [] }));
        const user = await eventually(
          () => who(s, dev),
          (u) => (u as { username?: string }).username !== 'dev',
          { timeoutMs: 20_000, everyMs: 200 },
        );
        expect(user).toEqual({ anonymous: true });
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('lifetime', () => {
  it('a day by default; as configured otherwise', async () => {
    const c = claimsOf(await stack.login('guest'));
    expect(c.exp - (c as unknown as { iat: number }).iat).toBe(24 * 3600);
    const short = await pod((cfg) => {
      cfg.auth.session_expiry_seconds = 600;
    });
    try {
      const s = claimsOf(await short.login('guest'));
      expect(s.exp - (s as unknown as { iat: number }).iat).toBe(600);
    } finally {
      await short.close();
    }
  });

  it('a logged-in cookie without a session id (minted by a Buildbot master) cannot be ended, and is not honoured', async () => {
    const { Sessions } = await import('../../../services/api/auth/session.js');
    const [row] = await stack.db.pool.query(sql`
      SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
      WHERE o.name = 'www' AND s.name = 'session_secret'`);
    const buildbotStyle = new Sessions(JSON.parse(row.value_json)).mint({
      username: 'admin',
      email: 'admin@example.org',
      groups: ['admins'],
    });
    expect(await who(stack, buildbotStyle)).toEqual({ anonymous: true });
    expect(await forces(stack, buildbotStyle)).toBe(403);
  });
});

describe('a Buildbot 3.7 master on the same database', () => {
  it("accepts a live session cookie: Buildbot's own BuildbotSession decodes it to the user", async () => {
    const cookie = await stack.login('dev');
    const [row] = await stack.db.pool.query(sql`
      SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
      WHERE o.name = 'www' AND s.name = 'session_secret'`);
    const secret = JSON.parse(row.value_json) as string;
    // buildbot.www.service.BuildbotSession(site, token) is what Buildbot's site does with a
    // TWISTED_SESSION cookie: jwt.decode with the secret in object_state, then user_info.
    const script = `
import json, sys
from buildbot.www.service import BuildbotSession
class Site: pass
site = Site(); site.session_secret = sys.argv[1]
print(json.dumps(BuildbotSession(site, sys.argv[2]).user_info))`;
    const out = execFileSync('/usr/bin/python3', ['-c', script, secret, cookie], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({
      username: 'dev',
      email: 'dev@example.org',
      groups: ['developers'],
    });
  });
});
