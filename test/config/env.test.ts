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
