// redis.sentinel: api and master pods get a Redis Sentinel deployment instead of a URL, in
// the environment the services read (REDIS_SENTINELS, REDIS_SENTINEL_NAME, the passwords
// from the Redis Secret), and the services' own parser takes what the chart renders.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadApiEnv, loadMasterEnv } from '../../services/core/config/env.js';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render, template } from './lib/helm.js';
import { containerEnv, label, ofKind, services } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const database = { url: 'postgresql://u:p@db/flotilla' };
const sentinel = {
  hosts: ['redis-sentinel-0.redis:26379', 'redis-sentinel-1.redis:26379', 'redis-sentinel-2.redis:26379'],
  masterName: 'flotilla',
};

function podsEnv(objects: K8sObject[]) {
  return services(objects).map((w) => ({ name: label(w), env: containerEnv(objects, w.pod.containers[0]) }));
}

describe('redis.sentinel', () => {
  it('gives api and master pods the sentinels, and the services read them as a Sentinel target', () => {
    const objects = render([
      { database, redis: { sentinel: { ...sentinel, password: 'data-pw', sentinelPassword: 's-pw' } } },
    ]);
    const expected = {
      sentinels: sentinel.hosts.map((h) => ({ host: h.split(':')[0], port: 26379 })),
      masterName: 'flotilla',
      password: 'data-pw',
      sentinelPassword: 's-pw',
    };
    const pods = podsEnv(objects);
    const api = pods.filter((p) => p.name.includes('-api'));
    const masters = pods.filter((p) => p.name.includes('-master'));
    expect(api).toHaveLength(1);
    expect(masters).toHaveLength(1);
    for (const p of api) {
      expect(p.env.REDIS_URL, p.name).toBeUndefined();
      expect(loadApiEnv(p.env).redis, p.name).toEqual(expected);
    }
    for (const p of masters) expect(loadMasterEnv(p.env).redis, p.name).toEqual(expected);
    // Workers never see Redis.
    for (const p of pods.filter((p) => p.name.includes('-worker')))
      expect(
        Object.keys(p.env).filter((k) => k.startsWith('REDIS_')),
        p.name,
      ).toEqual([]);
  });

  it('works without passwords, and with an existing Secret holding them', () => {
    const open = podsEnv(render([{ database, redis: { sentinel } }])).find((p) => p.name.includes('-api'))!;
    expect(loadApiEnv(open.env).redis).toEqual({
      sentinels: sentinel.hosts.map((h) => ({ host: h.split(':')[0], port: 26379 })),
      masterName: 'flotilla',
    });
    const objects = render([{ database, redis: { existingSecret: 'redis-auth', sentinel } }]);
    // The Secret named is the operator's: the chart makes no Redis Secret of its own.
    expect(ofKind(objects, 'Secret').filter((s) => s.metadata.name.endsWith('-redis'))).toEqual([]);
    const api = services(objects).find((w) => label(w).includes('-api'))!;
    const refs = (api.pod.containers[0].env as any[])
      .filter((e) => e.name.startsWith('REDIS_') && e.valueFrom)
      .map((e) => [e.name, e.valueFrom.secretKeyRef]);
    expect(refs).toEqual([
      ['REDIS_PASSWORD', { name: 'redis-auth', key: 'REDIS_PASSWORD', optional: true }],
      ['REDIS_SENTINEL_PASSWORD', { name: 'redis-auth', key: 'REDIS_SENTINEL_PASSWORD', optional: true }],
    ]);
  });

  it('keeps the URL as before when no sentinels are given', () => {
    const pods = podsEnv(render([CI_VALUES[0]!]));
    for (const p of pods.filter((p) => p.name.includes('-api') || p.name.includes('-master'))) {
      expect(p.env.REDIS_URL, p.name).toMatch(/^redis:\/\//);
      expect(p.env.REDIS_SENTINELS, p.name).toBeUndefined();
    }
  });

  it('refuses sentinels without a master name, or beside a URL', () => {
    const noName = template([{ database, redis: { sentinel: { hosts: sentinel.hosts } } }]);
    expect(noName.status).not.toBe(0);
    expect(noName.stderr).toContain('redis.sentinel.masterName is required');
    const both = template([{ database, redis: { url: 'redis://r:6379', sentinel } }]);
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain('redis.url and redis.sentinel.hosts: set one, not both');
    const bad = template([{ database, redis: { sentinel: { ...sentinel, hosts: ['no-port'] } } }]);
    expect(bad.status).not.toBe(0);
  });
});
