// The pass and Vault secret providers (Buildbot's SecretInPass and SecretInVault), read as a
// build starts (`load`) and answered from what was read (`get`):
// - pass: Debian's `pass` and gpg on a store this test makes in a GNUPGHOME of its own, with a
//   throwaway key that has a passphrase (test/fixtures/gpg): the first line of an entry, none
//   for an unknown entry or a wrong passphrase (the latter logged), refused at start without
//   `pass` or the store;
// - Vault: a server on 127.0.0.1 that answers as Vault's KV engines v1 and v2 document and
//   refuses (422) any request not shaped as documented or without the token header.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretsProvider } from '../../services/core/config/master-config/secrets.js';
import type { SecretsProviderConfig } from '../../services/core/config/master-config.js';
import type { Logger } from '../../services/core/telemetry/logger.js';
import { secretsProviders } from '../../services/master/secrets.js';
import { Forge } from '../helpers/forge.js';
import { capturedLog } from '../helpers/log-lines.js';

const root = mkdtempSync(join(tmpdir(), 'flotilla-secret-providers-'));
const KEY = new URL('../fixtures/gpg/throwaway-test-key.asc', import.meta.url).pathname;
const FINGERPRINT = '83D35B5E79043F6540FF17B081760B500EE5DC1A';
const gnupghome = join(root, 'gnupg');
const store = join(root, 'store');
const baseEnv = { PATH: process.env.PATH, GNUPGHOME: gnupghome, HOME: root };

const provider = (config: unknown, env: Record<string, string | undefined> = baseEnv, log?: Logger) =>
  secretsProviders([secretsProvider.parse(config) as SecretsProviderConfig], env, log);

const MANY = Array.from({ length: 12 }, (_, i) => i);

describe('pass', () => {
  beforeAll(() => {
    mkdirSync(gnupghome, { mode: 0o700 });
    // No passphrase cached by the agent: each read must give it.
    execFileSync(
      'sh',
      [
        '-c',
        `printf 'allow-loopback-pinentry\\ndefault-cache-ttl 0\\nmax-cache-ttl 0\\n' > "$GNUPGHOME/gpg-agent.conf"`,
      ],
      { env: baseEnv },
    );
    execFileSync('gpg', ['--batch', '--import', KEY], { env: baseEnv, stdio: 'ignore' });
    execFileSync('gpg', ['--batch', '--import-ownertrust'], { env: baseEnv, input: `${FINGERPRINT}:6:\n` });
    const env = { ...baseEnv, PASSWORD_STORE_DIR: store };
    execFileSync('pass', ['init', FINGERPRINT], { env, stdio: 'ignore' });
    execFileSync('pass', ['insert', '-m', 'deploy/token'], { env, input: 's3cr3t-Tok\nsecond line\n' });
    execFileSync('pass', ['insert', '-m', 'plain'], { env, input: 'just one' });
    for (const i of MANY) execFileSync('pass', ['insert', '-m', `many/${i}`], { env, input: `value ${i}\n` });
  });
  afterAll(() => {
    execFileSync('gpgconf', ['--kill', 'gpg-agent'], { env: baseEnv });
  });

  const env = { ...baseEnv, PASS_PHRASE: 'pp' };

  it("reads an entry's first line as a build starts, with the key's passphrase", async () => {
    const { log, lines } = capturedLog();
    const p = provider({ type: 'pass', dirname: store, gpgPassphrase_env: 'PASS_PHRASE' }, env, log);
    expect(p.get('deploy/token')).toBeUndefined();
    await p.load!(['deploy/token', 'plain', 'no/such/entry']);
    expect([p.get('deploy/token'), p.get('plain'), p.get('no/such/entry')]).toEqual([
      's3cr3t-Tok',
      'just one',
      undefined,
    ]);
    // An entry the store does not have is no secret, not a failure to log.
    expect(lines).toEqual([]);
  });

  it('reads many entries a build names at once, every one of them', async () => {
    // Reads at once against the one gpg-agent came back empty (pass.ts reads them in turn). With
    // the reads at once, this failed 1 of 3 runs beside `stress-ng --cpu 2` (2026-11-30): a
    // race, so not every run before the fix fails; every run after it must pass.
    const p = provider({ type: 'pass', dirname: store, gpgPassphrase_env: 'PASS_PHRASE' }, env);
    await p.load!(MANY.map((i) => `many/${i}`));
    expect(MANY.map((i) => p.get(`many/${i}`))).toEqual(MANY.map((i) => `value ${i}`));
  });

  it('a wrong passphrase, or a name that climbs out of the store: no secret; the passphrase logged as a failed read', async () => {
    const { log, lines } = capturedLog();
    const p = provider(
      { type: 'pass', dirname: store, gpgPassphrase_env: 'PASS_PHRASE' },
      { ...env, PASS_PHRASE: 'wrong' },
      log,
    );
    await p.load!(['deploy/token', '../store/plain', '--help']);
    expect([p.get('deploy/token'), p.get('../store/plain'), p.get('--help')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(lines.map((l) => [l.msg, l.secret])).toEqual([['a secret could not be read', 'deploy/token']]);
    expect(String(lines[0]!.err)).toMatch(/^pass show failed: gpg: /);
    expect(JSON.stringify(lines)).not.toContain('wrong');
  });

  it('is refused at start without pass on PATH or without its directory', () => {
    expect(() => provider({ type: 'pass' }, { PATH: root })).toThrow('secrets: pass does not exist in PATH');
    expect(() => provider({ type: 'pass', dirname: join(root, 'none') })).toThrow(/does not exist/);
    expect(() =>
      secretsProvider.parse({ type: 'pass', gpgPassphrase_env: 'A', gpgPassphrase_file: '/f' }),
    ).toThrow(/at most one of gpgPassphrase_env, gpgPassphrase_file/);
  });
});

describe('Vault', () => {
  const TOKEN = 'hvs.test-token';
  const V1: Record<string, Record<string, unknown>> = {
    '/v1/secret/deploy': { value: 'v1-value', user: 'ci' },
  };
  const V2: Record<string, Record<string, unknown>> = {
    '/v1/kv2/data/team/deploy': { value: 'v2-value', password: 'p@ss/word' },
  };
  let vault: Forge;
  beforeAll(async () => {
    vault = await Forge.start(
      (r) => {
        const problems: string[] = [];
        if (r.method !== 'GET') problems.push(`method ${r.method}`);
        if (r.headers['x-vault-token'] !== TOKEN) problems.push('no X-Vault-Token');
        if (!/^\/v1\/[^?#]+$/.test(r.url)) problems.push(`path ${r.url}`);
        return problems;
      },
      (r) =>
        r.url in V1
          ? {
              request_id: 'r1',
              lease_id: '',
              renewable: false,
              lease_duration: 2764800,
              data: V1[r.url],
              wrap_info: null,
            }
          : {
              request_id: 'r2',
              data: {
                data: V2[r.url],
                metadata: { created_time: '2024-05-10T12:00:00Z', destroyed: false, version: 3 },
              },
            },
    );
    vault.fail = (r) => (r.url in V1 || r.url in V2 ? undefined : 404);
  });
  afterAll(() => vault?.close());

  it('KV v1: GET /v1/<mount>/<path> with the token, `value` unless the name says the key', async () => {
    const p = provider({ type: 'vault', vaultServer: `${vault.url}/`, vaultToken_env: 'VT' }, { VT: TOKEN });
    await p.load!(['deploy', 'deploy/user', 'deploy/nokey', 'missing']);
    expect(['deploy', 'deploy/user', 'deploy/nokey', 'missing'].map((n) => p.get(n))).toEqual([
      'v1-value',
      'ci',
      undefined,
      undefined,
    ]);
    expect(vault.received.every((r) => r.status !== 422)).toBe(true);
    expect(vault.received.map((r) => r.url)).toContain('/v1/secret/missing');
  });

  it('KV v2: GET /v1/<mount>/data/<path>', async () => {
    const p = provider(
      { type: 'vault', vaultServer: vault.url, vaultToken_env: 'VT', secretsmount: 'kv2', apiVersion: 2 },
      { VT: TOKEN },
    );
    // `team/deploy` is the key `deploy` of the secret `team`, as Buildbot splits it.
    await p.load!(['team/deploy/value', 'team/deploy/password', 'team/deploy']);
    expect(['team/deploy/value', 'team/deploy/password', 'team/deploy'].map((n) => p.get(n))).toEqual([
      'v2-value',
      'p@ss/word',
      undefined,
    ]);
    expect(vault.received.map((r) => r.url)).toContain('/v1/kv2/data/team');
  });

  it('a wrong token is refused by the server, and the secret is missing; the token is required', async () => {
    vault.received.length = 0;
    const p = provider({ type: 'vault', vaultServer: vault.url, vaultToken_env: 'VT' }, { VT: 'wrong' });
    await p.load!(['deploy']);
    expect(p.get('deploy')).toBeUndefined();
    expect(vault.received.map((r) => r.status)).toEqual([422]);
    expect(() => provider({ type: 'vault', vaultServer: vault.url })).toThrow(
      /exactly one of vaultToken_env/,
    );
    expect(() =>
      provider({ type: 'vault', vaultServer: 'http://vault.example.org', vaultToken_env: 'VT' }),
    ).toThrow(/https URL/);
  });

  it('a name cannot reach another path of the API', async () => {
    vault.received.length = 0;
    const p = provider({ type: 'vault', vaultServer: vault.url, vaultToken_env: 'VT' }, { VT: TOKEN });
    await p.load!(['../sys/seal/x', 'a%2F..%2Fb/x', 'q?x=1/value']);
    expect(vault.received.map((r) => r.url)).toEqual(['/v1/secret/a%252F..%252Fb', '/v1/secret/q%3Fx%3D1']);
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));
