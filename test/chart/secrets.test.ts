// No secret appears in a ConfigMap (or anywhere but a Secret); every credential reaches
// the pods from a Secret, the chart's own or an existingSecret; workers see none but
// their own password.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render } from './lib/helm.js';
import { named, ofKind, workloads } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const SENTINEL = {
  db: 'SENTINEL-db-password',
  redis: 'SENTINEL-redis-password',
  session: 'SENTINEL-session-secret-0123456789abcdef',
  hash: 'scrypt$16384$8$1$U0VOVElORUw$SENTINELHASH',
};

const sentinelValues = {
  database: { url: `postgresql://flotilla:${SENTINEL.db}@db:5432/flotilla` },
  redis: { url: `redis://:${SENTINEL.redis}@redis:6379` },
  session: { secret: SENTINEL.session },
  auth: { users: [{ username: 'alice', password_hash: SENTINEL.hash }] },
  worker: { replicas: 3 },
};

/** Every value held in a Secret, decoded: what must never show up anywhere else. */
function secretValues(objects: K8sObject[]): string[] {
  return ofKind(objects, 'Secret').flatMap((s) => [
    ...Object.values<string>(s.data ?? {}).map((v) => Buffer.from(v, 'base64').toString('utf8')),
    ...Object.values<string>(s.stringData ?? {}),
  ]);
}

/** The needles found in ConfigMaps, or with `everywhere`, in any object but a Secret. */
function leaks(objects: K8sObject[], needles: string[], everywhere = false): string[] {
  const haystacks = objects.filter((o) => (everywhere ? o.kind !== 'Secret' : o.kind === 'ConfigMap'));
  return haystacks.flatMap((o) => {
    const text = JSON.stringify(o);
    return needles.filter((n) => text.includes(n)).map((n) => `${o.kind}/${o.metadata.name} holds ${n}`);
  });
}

describe('no secret in a ConfigMap', () => {
  it('keeps the known secret values (and every generated one) out of ConfigMaps and pod specs', () => {
    const objects = render([sentinelValues]);
    const needles = [...Object.values(SENTINEL), ...secretValues(objects)];
    // The sentinels really are in Secrets, so not finding them elsewhere means something.
    for (const s of Object.values(SENTINEL)) {
      expect(secretValues(objects).some((v) => v.includes(s))).toBe(true);
    }
    expect(ofKind(objects, 'ConfigMap').length).toBeGreaterThan(0);
    expect(leaks(objects, needles)).toEqual([]);
    expect(leaks(objects, needles, true)).toEqual([]);
  });

  it('the search finds a secret that does land in a ConfigMap', () => {
    const objects = render([sentinelValues, { config: { title: `Flotilla ${SENTINEL.session}` } }]);
    expect(leaks(objects, [SENTINEL.session])).toEqual([
      `ConfigMap/flotilla-ci-config holds ${SENTINEL.session}`,
    ]);
  });

  it('sends users to the master configuration as a file path, not as hashes', () => {
    const objects = render([sentinelValues]);
    const config = named(objects, 'ConfigMap', 'flotilla-ci-config').data['master.yaml'];
    expect(config).toContain('users_file: /etc/flotilla/users/users.yaml');
    expect(config).not.toContain('password_hash');
  });
});

describe('existing Secrets', () => {
  const objects = () => render([CI_VALUES[2]!]);
  const refs = (o: K8sObject[]) =>
    workloads(o).flatMap((w) => [
      ...[...(w.pod.initContainers ?? []), ...w.pod.containers].flatMap((c: any) =>
        (c.env ?? [])
          .filter((e: any) => e.valueFrom?.secretKeyRef)
          .map((e: any) => `${e.name}=${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`),
      ),
      ...w.pod.volumes.filter((v: any) => v.secret).map((v: any) => `volume=${v.secret.secretName}`),
    ]);

  it('makes no Secret of its own', () => {
    expect(ofKind(objects(), 'Secret')).toEqual([]);
  });

  it('reads every credential from the named Secrets and keys', () => {
    expect([...new Set(refs(objects()))].sort()).toEqual([
      // optional: API pods read replicas' URLs from it when it has them
      'DATABASE_READ_URL=flotilla-database/DATABASE_READ_URL',
      'DATABASE_URL=flotilla-database/url',
      'REDIS_URL=flotilla-redis/url',
      'SESSION_SECRET=flotilla-session/secret',
      'volume=flotilla-users',
      'volume=flotilla-worker-passwords',
    ]);
  });

  it('the reference check sees a chart-made Secret', () => {
    expect(refs(render([CI_VALUES[0]!]))).toContain('DATABASE_URL=flotilla-ci-database/DATABASE_URL');
  });
});

describe('workers hold nothing but their own password', () => {
  const worker = (o: K8sObject[]) => named(o, 'StatefulSet', 'flotilla-ci-worker').spec.template.spec;
  /** Settings a worker must not have, in any of its containers. */
  const credentials = (pod: any) =>
    [...pod.initContainers, ...pod.containers].flatMap((c: any) => [
      ...(c.env ?? []).map((e: any) => e.name).filter((n: string) => /DATABASE|REDIS|SESSION/.test(n)),
      ...(c.envFrom ?? []).map(() => `${c.name}: envFrom`),
    ]);

  it('has no database, Redis or session settings', () => {
    expect(credentials(worker(render([sentinelValues])))).toEqual([]);
  });

  it('never mounts the Secret of all passwords into the worker container', () => {
    const pod = worker(render([sentinelValues]));
    const secretVolumes = pod.volumes.filter((v: any) => v.secret).map((v: any) => v.name);
    expect(secretVolumes).toEqual(['worker-passwords']);
    const [main] = pod.containers;
    expect(main.volumeMounts.map((m: any) => m.name)).not.toContain('worker-passwords');
    // Only the init container reads it, to copy this worker's own key.
    expect(pod.initContainers[0].volumeMounts.map((m: any) => m.name)).toContain('worker-passwords');
  });

  it('the check would see a database URL given to a worker', () => {
    const pod = worker(render([sentinelValues]));
    pod.containers[0].env.push({ name: 'DATABASE_URL', value: 'x' });
    expect(credentials(pod)).toEqual(['DATABASE_URL']);
  });
});
