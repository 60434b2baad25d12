// The base hook's lack of authentication cannot be missed (issue 28): enabled without
// change_hooks.base.auth, the API warns at start, naming the risk and the setting; with it,
// a POST needs the configured HTTP Basic credentials (Buildbot's change_hook_auth: 401 and
// the realm "Protected area" otherwise) and makes no change without them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { changesAfter, hookApp, lastChangeId } from './lib.js';

let h: Harness;
const apps: FastifyInstance[] = [];
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await h?.close();
});

async function started(config: Parameters<typeof hookApp>[1], env: Record<string, string> = {}) {
  const { log, lines } = capturedLog();
  const app = await hookApp(h, config, env, log);
  apps.push(app);
  return { app, lines };
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('the base hook without authentication', () => {
  it('warns at start, naming the risk and the setting that closes it', async () => {
    const { lines } = await started({ base: { enabled: true } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, dialect: 'base', setting: 'change_hooks.base.auth' });
    expect(lines[0]!.msg).toMatch(
      /enabled without authentication: anyone .* shell commands; set change_hooks.base.auth/,
    );
  });

  it('says nothing when the hook is off or asks for credentials', async () => {
    expect((await started({ base: { enabled: false } })).lines).toEqual([]);
    expect((await started(undefined)).lines).toEqual([]);
    const auth = { username: 'ci', password_env: 'HOOK_PASSWORD' };
    expect((await started({ base: { enabled: true, auth } }, { HOOK_PASSWORD: 'pw' })).lines).toEqual([]);
  });
});

describe('change_hooks.base.auth', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'hook-auth-')), 'password');
    writeFileSync(file, 's3cret\n');
    ({ app } = await started({ base: { enabled: true, auth: { username: 'ci', password_file: file } } }));
  });

  const post = async (authorization?: string) => {
    const before = await lastChangeId(h);
    const res = await app.inject({
      method: 'POST',
      url: '/change_hook/base',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(authorization ? { authorization } : {}),
      },
      payload: 'author=me&properties={"owner":"evil"}',
    });
    return { res, changes: await changesAfter(h, before) };
  };

  it('refuses a POST without credentials, or with wrong ones, with 401 and makes no change', async () => {
    for (const authorization of [
      undefined,
      basic('ci', 'wrong'),
      basic('other', 's3cret'),
      basic('ci', 's3cret2'),
      'Basic !!!',
      'Bearer s3cret',
    ]) {
      const { res, changes } = await post(authorization);
      expect([res.statusCode, res.body, res.headers['www-authenticate']], authorization).toEqual([
        401,
        'Unauthorized',
        'Basic realm="Protected area"',
      ]);
      expect(changes).toEqual([]);
    }
  });

  it('takes the change with the right credentials', async () => {
    const { res, changes } = await post(basic('ci', 's3cret'));
    expect([res.statusCode, res.body]).toEqual([200, '1 change found']);
    expect(changes.map((c) => c.author)).toEqual(['me']);
  });

  // Review of issue 28's fix: the hook's password could be guessed without limit.
  it('throttles wrong credentials per address: past 30, a 429 that names the wait, even for the right ones', async () => {
    const from = async (remoteAddress: string, authorization: string) => {
      const before = await lastChangeId(h);
      const res = await app.inject({
        method: 'POST',
        url: '/change_hook/base',
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
        payload: 'author=guess',
      });
      return { res, changes: await changesAfter(h, before) };
    };
    for (let i = 0; i < 30; i++)
      expect((await from('10.9.8.7', basic('ci', `guess${i}`))).res.statusCode, `guess ${i}`).toBe(401);
    for (const authorization of [basic('ci', 'guess30'), basic('ci', 's3cret')]) {
      const { res, changes } = await from('10.9.8.7', authorization);
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.body).toBe(`too many failed logins: try again in ${res.headers['retry-after']} seconds`);
      expect(changes).toEqual([]);
    }
    // Another address is not held back by the guesser.
    const other = await from('10.9.8.8', basic('ci', 's3cret'));
    expect([other.res.statusCode, other.changes.map((c) => c.author)]).toEqual([200, ['guess']]);
  });

  it('a password file that cannot be read stops the start', async () => {
    await expect(
      hookApp(h, { base: { enabled: true, auth: { username: 'ci', password_file: '/nonexistent/pw' } } }),
    ).rejects.toThrow(/change_hooks.base.auth: cannot read \/nonexistent\/pw/);
  });
});
