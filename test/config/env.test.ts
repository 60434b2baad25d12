import { describe, expect, it } from 'vitest';
import { loadApiEnv, loadMasterEnv, loadWorkerEnv, redact } from '../../services/core/config/env.js';
import { ConfigError } from '../../services/core/config/errors.js';

describe('environment', () => {
  it('has defaults for the local stack', () => {
    const env = loadApiEnv({});
    expect(env.port).toBe(8010);
    expect(env.databaseUrl).toMatch(/^postgresql:/);
    expect(env.publicUrl).toBe('http://127.0.0.1:8010/');
    expect(env.masterConfigPath).toBeNull();
  });

  it('reads every variable', () => {
    const env = loadApiEnv({
      DATABASE_URL: 'postgres://u:p@db:5432/x',
      REDIS_URL: 'redis://r:6379',
      PORT: '9000',
      PUBLIC_URL: 'https://ci.example.com',
      LOG_LEVEL: 'DEBUG',
      HOST: '0.0.0.0',
    });
    expect(env).toMatchObject({
      port: 9000,
      publicUrl: 'https://ci.example.com/',
      logLevel: 'debug',
      host: '0.0.0.0',
    });
  });

  it('names every bad variable and what was expected', () => {
    let err: unknown;
    try {
      loadApiEnv({ DATABASE_URL: 'mysql://x', PORT: 'eighty', LOG_LEVEL: 'loud', REDIS_URL: 'not a url' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toMatch(/DATABASE_URL: expected a postgres: or postgresql: URL/);
    expect(problems).toMatch(/PORT: expected a port number 0-65535, got "eighty"/);
    expect(problems).toMatch(/LOG_LEVEL: expected one of .*got "loud"/);
    expect(problems).toMatch(/REDIS_URL: expected a URL/);
  });

  it('takes one Redis URL by default, unchanged', () => {
    expect(loadApiEnv({}).redis).toBe('redis://127.0.0.1:6379');
    expect(loadApiEnv({ REDIS_URL: 'rediss://:pw@r:6380/2' }).redis).toBe('rediss://:pw@r:6380/2');
  });

  it('takes a Redis Sentinel deployment instead when REDIS_SENTINELS is set', () => {
    const env = loadMasterEnv({
      MASTER_CONFIG: '/x.yaml',
      REDIS_SENTINELS: 'sentinel-0:26379, sentinel-1:26380,[::1]:26381',
      REDIS_SENTINEL_NAME: 'flotilla',
      REDIS_PASSWORD: 'data-pw',
      REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
    });
    expect(env.redis).toEqual({
      sentinels: [
        { host: 'sentinel-0', port: 26379 },
        { host: 'sentinel-1', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      masterName: 'flotilla',
      password: 'data-pw',
      sentinelPassword: 'sentinel-pw',
    });
    expect(loadApiEnv({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_NAME: 'm' }).redis).toEqual({
      sentinels: [{ host: 's', port: 26379 }],
      masterName: 'm',
    });
  });

  it('names what is wrong with a Sentinel setting', () => {
    const problems = (src: Record<string, string>) => {
      try {
        loadApiEnv(src);
      } catch (e) {
        return (e as ConfigError).problems.join('\n');
      }
      return '';
    };
    expect(problems({ REDIS_SENTINELS: 's:26379' })).toMatch(/REDIS_SENTINEL_NAME: required/);
    expect(problems({ REDIS_SENTINELS: 's:26379,nope,t:0', REDIS_SENTINEL_NAME: 'm' })).toMatch(
      /REDIS_SENTINELS: expected host:port, got "nope"[\s\S]*got "t:0"/,
    );
    expect(problems({ REDIS_SENTINELS: ' , ', REDIS_SENTINEL_NAME: 'm' })).toMatch(
      /REDIS_SENTINELS: expected at least one/,
    );
    expect(
      problems({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_NAME: 'm', REDIS_URL: 'redis://r' }),
    ).toMatch(/REDIS_URL and REDIS_SENTINELS: set one, not both/);
  });

  it('requires the master configuration path and worker credentials', () => {
    expect(() => loadMasterEnv({})).toThrow(/MASTER_CONFIG: required/);
    expect(() => loadWorkerEnv({})).toThrow(/WORKER_NAME: required/);
    expect(loadMasterEnv({ MASTER_CONFIG: '/x.yaml', MASTER_NAME: 'master-0' }).masterName).toBe('master-0');
  });

  it('never shows a password in a message', () => {
    expect(redact('postgresql://flotilla:s3cret@db:5432/x')).toBe('postgresql://flotilla:***@db:5432/x');
    expect(() => loadApiEnv({ DATABASE_URL: 'postgresql://u:s3cret@' })).not.toThrow(/s3cret/);
  });
});
