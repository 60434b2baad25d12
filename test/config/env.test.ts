import { describe, expect, it } from 'vitest';
import { loadApiEnv, loadMasterEnv, loadWorkerEnv, redact } from '../../services/core/config/env.js';
import { ConfigError } from '../../services/core/config/errors.js';

/** The problems loadApiEnv names for this environment, one a line ('' when none). */
function problems(src: Record<string, string>): string {
  try {
    loadApiEnv(src);
  } catch (e) {
    return (e as ConfigError).problems.join('\n');
  }
  return '';
}

describe('environment', () => {
  it('has defaults for the local stack', () => {
    const env = loadApiEnv({});
    expect(env.port).toBe(8010);
    expect(env.databaseUrl).toMatch(/^postgresql:/);
    expect(env.publicUrl).toBe('http://127.0.0.1:8010/');
    expect(env.masterConfigPath).toBeNull();
    expect(env.databasePoolSize).toBe(10);
  });

  it('reads every variable', () => {
    const env = loadApiEnv({
      DATABASE_URL: 'postgres://u:p@db:5432/x',
      REDIS_URL: 'redis://r:6379',
      PORT: '9000',
      PUBLIC_URL: 'https://ci.example.com',
      LOG_LEVEL: 'DEBUG',
      HOST: '0.0.0.0',
      DATABASE_POOL_SIZE: '4',
    });
    expect(env).toMatchObject({
      databasePoolSize: 4,
      port: 9000,
      publicUrl: 'https://ci.example.com/',
      logLevel: 'debug',
      host: '0.0.0.0',
    });
  });

  it('names every bad variable and what was expected', () => {
    let err: unknown;
    try {
      loadApiEnv({
        DATABASE_URL: 'mysql://x',
        PORT: 'eighty',
        LOG_LEVEL: 'loud',
        REDIS_URL: 'not a url',
        DATABASE_POOL_SIZE: '0',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toMatch(/DATABASE_URL: expected a postgres: or postgresql: URL/);
    expect(problems).toMatch(/PORT: expected a port number 0-65535, got "eighty"/);
    expect(problems).toMatch(/LOG_LEVEL: expected one of .*got "loud"/);
    expect(problems).toMatch(/REDIS_URL: expected a URL/);
    expect(problems).toMatch(/DATABASE_POOL_SIZE: expected a whole number, 1 or more, got "0"/);
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

  it('reads the replicas an API pod reads from', () => {
    expect(loadApiEnv({}).readReplicas).toEqual({ urls: [], waitSeconds: 1, maxLagSeconds: 30 });
    const env = loadApiEnv({
      DATABASE_URL: 'postgresql://u:p@primary/x',
      DATABASE_READ_URL: ' postgresql://u:p@replica-1/x ,postgres://u:p@replica-2:5433/x',
      DATABASE_READ_WAIT_SECONDS: '0.5',
      DATABASE_READ_MAX_LAG_SECONDS: '30',
    });
    expect(env.readReplicas).toEqual({
      urls: ['postgresql://u:p@replica-1/x', 'postgres://u:p@replica-2:5433/x'],
      waitSeconds: 0.5,
      maxLagSeconds: 30,
    });
  });

  it('names what is wrong with the replicas, never their passwords', () => {
    const primary = 'postgresql://u:s3cret@primary/x';
    const bad = problems({
      DATABASE_URL: primary,
      DATABASE_READ_URL: `postgresql://u:s3cret@r1/x,,mysql://u:s3cret@r2/x,not a url,postgresql://u:s3cret@r1/x,${primary}`,
      DATABASE_READ_WAIT_SECONDS: 'soon',
      DATABASE_READ_MAX_LAG_SECONDS: '0',
    });
    expect(bad).toMatch(/DATABASE_READ_URL: entry 2 is empty/);
    expect(bad).toMatch(/DATABASE_READ_URL: entry 3: expected a postgres or postgresql URL, got mysql:/);
    expect(bad).toMatch(/DATABASE_READ_URL: entry 4: expected a URL, got "not a url"/);
    expect(bad).toMatch(/DATABASE_READ_URL: entry 5: postgresql:\/\/u:\*\*\*@r1\/x is named twice/);
    expect(bad).toMatch(/DATABASE_READ_URL: entry 6: is DATABASE_URL itself/);
    expect(bad).toMatch(/DATABASE_READ_WAIT_SECONDS: expected a number of seconds, got "soon"/);
    expect(bad).toMatch(/DATABASE_READ_MAX_LAG_SECONDS: expected more than 0/);
    expect(bad).not.toMatch(/s3cret/);
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
