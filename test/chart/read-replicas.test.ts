// database.readUrls: API pods get the replicas' URLs from the database Secret (or from an
// existing Secret's DATABASE_READ_URL), in the environment the API reads, and the API's own
// parser takes what the chart renders. Masters and the migration job never see them.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadApiEnv } from '../../services/core/config/env.js';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render, template } from './lib/helm.js';
import { containerEnv, label, ofKind, services } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const redis = { url: 'redis://r:6379' };
const primary = 'postgresql://u:p@db/flotilla';
const readUrls = ['postgresql://u:p@db-replica-0/flotilla', 'postgresql://u:p@db-replica-1/flotilla'];

function envOf(objects: K8sObject[], component: string) {
  return services(objects)
    .filter((w) => label(w).includes(`-${component}`))
    .map((w) => containerEnv(objects, w.pod.containers[0]));
}

describe('database.readUrls', () => {
  it('gives API pods the replicas, and only them', () => {
    const objects = render([
      { database: { url: primary, readUrls, readWaitSeconds: 0.5, readMaxLagSeconds: 10 }, redis },
    ]);
    const [api] = envOf(objects, 'api');
    expect(loadApiEnv(api!).readReplicas).toEqual({ urls: readUrls, waitSeconds: 0.5, maxLagSeconds: 10 });
    expect(loadApiEnv(api!).databaseUrl).toBe(primary);
    for (const env of [...envOf(objects, 'master'), ...envOf(objects, 'worker')]) {
      expect(Object.keys(env).filter((k) => k.startsWith('DATABASE_READ'))).toEqual([]);
    }
    const job = ofKind(objects, 'Job').flatMap((j) => j.spec.template.spec.containers);
    for (const c of job) expect(JSON.stringify(c.env ?? [])).not.toContain('DATABASE_READ');
  });

  it('without replicas, the API reads from the primary as before', () => {
    const [api] = envOf(render([CI_VALUES[0]!]), 'api');
    expect(api!.DATABASE_READ_URL).toBeUndefined();
    expect(loadApiEnv(api!).readReplicas.urls).toEqual([]);
  });

  it('reads them from an existing Secret when it has them', () => {
    const objects = render([{ database: { existingSecret: 'pg-urls' }, redis }]);
    const api = services(objects).find((w) => label(w).includes('-api'))!;
    const ref = (api.pod.containers[0].env as any[]).find((e) => e.name === 'DATABASE_READ_URL');
    expect(ref.valueFrom.secretKeyRef).toEqual({ name: 'pg-urls', key: 'DATABASE_READ_URL', optional: true });
  });

  it('refuses replicas beside an existing Secret, the primary among them, and malformed URLs', () => {
    const both = template([{ database: { existingSecret: 'pg-urls', readUrls }, redis }]);
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain("put the replicas' URLs in the existing Secret");
    const self = template([{ database: { url: primary, readUrls: [primary] }, redis }]);
    expect(self.status).not.toBe(0);
    expect(self.stderr).toContain('name only replicas');
    for (const bad of [['mysql://x/y'], ['postgresql://a/b,postgresql://c/d'], [readUrls[0], readUrls[0]]]) {
      const r = template([{ database: { url: primary, readUrls: bad }, redis }]);
      expect(r.status, JSON.stringify(bad)).not.toBe(0);
    }
  });
});
