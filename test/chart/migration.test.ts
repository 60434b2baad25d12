// The migration Job runs before any pod: a pre-install and pre-upgrade hook running
// `migrate`, whose database credentials exist before it does, while the workloads are
// ordinary release objects that Helm applies only after the hooks succeed.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render } from './lib/helm.js';
import { named, ofKind, services } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const hooks = (o: K8sObject): string[] =>
  (o.metadata.annotations?.['helm.sh/hook'] ?? '').split(',').filter(Boolean);
const weight = (o: K8sObject) => Number(o.metadata.annotations?.['helm.sh/hook-weight'] ?? 0);

/** What keeps a release's migration from running before its pods. */
function migrationProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const jobs = ofKind(objects, 'Job');
  if (jobs.length !== 1) return [`expected one migration Job, found ${jobs.length}`];
  const job = jobs[0]!;
  const h = hooks(job);
  for (const phase of ['pre-install', 'pre-upgrade'] as const)
    if (!h.includes(phase)) problems.push(`Job is not a ${phase} hook`);
  const pod = job.spec.template.spec;
  const [container, ...more] = pod.containers;
  if (more.length) problems.push('Job runs more than one container');
  if (JSON.stringify([...(container.command ?? []), ...(container.args ?? [])]) !== '["migrate"]') {
    problems.push(`Job runs ${JSON.stringify(container.args)}, not migrate`);
  }
  if (pod.restartPolicy !== 'Never' && pod.restartPolicy !== 'OnFailure')
    problems.push('Job restarts forever');
  // Its database Secret exists before it: an existing one, or a hook created earlier.
  const ref = container.env.find((e: any) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef;
  if (!ref) problems.push('Job has no DATABASE_URL from a Secret');
  const secret = ref && objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
  if (secret) {
    const early = h.every((phase) => hooks(secret).includes(phase)) && weight(secret) < weight(job);
    if (!early) problems.push(`Secret ${ref.name} is not created before the Job`);
  }
  // Pods come from ordinary objects, applied after the pre-* hooks have succeeded.
  for (const w of services(objects)) {
    if (hooks(w.object).length) problems.push(`${w.object.kind}/${w.object.metadata.name} is itself a hook`);
  }
  return problems;
}

describe.each(CI_VALUES.map((f) => [f.split('/').pop(), f]))('%s', (_name, file) => {
  it('migrates before any pod starts', () => {
    expect(migrationProblems(render([file]))).toEqual([]);
  });
});

describe('the migration hook', () => {
  it('reads a short-lived hook copy of the chart-made database Secret', () => {
    const o = render([CI_VALUES[0]!]);
    const copy = named(o, 'Secret', 'flotilla-ci-migrate');
    expect(copy.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    const decode = (s: K8sObject, k: string) => Buffer.from(s.data[k], 'base64').toString();
    expect(decode(copy, 'DATABASE_URL')).toBe(
      decode(named(o, 'Secret', 'flotilla-ci-database'), 'DATABASE_URL'),
    );
  });

  it('reads an existing database Secret directly, and makes no copy', () => {
    const o = render([CI_VALUES[2]!]);
    const env = named(o, 'Job', 'flotilla-ci-migrate').spec.template.spec.containers[0].env;
    expect(env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'flotilla-database', key: 'url' } },
    });
    expect(ofKind(o, 'Secret')).toEqual([]);
  });

  it('can be turned off (for migrations run another way)', () => {
    const o = render([CI_VALUES[0]!, { migration: { enabled: false } }]);
    expect(ofKind(o, 'Job')).toEqual([]);
    // Only `helm test`'s pod is left among the hooks.
    expect(o.filter((x) => hooks(x).length).map((x) => `${x.kind}/${x.metadata.name}`)).toEqual([
      'Pod/flotilla-ci-test-api',
    ]);
  });
});

describe('the migration check', () => {
  const release = () => render([CI_VALUES[0]!]);

  it('notices a post-install Job', () => {
    const o = release();
    named(o, 'Job', 'flotilla-ci-migrate').metadata.annotations['helm.sh/hook'] = 'post-install,post-upgrade';
    expect(migrationProblems(o)).toEqual([
      'Job is not a pre-install hook',
      'Job is not a pre-upgrade hook',
      'Secret flotilla-ci-migrate is not created before the Job',
    ]);
  });

  it('notices a Job that does not migrate, and a Secret created after it', () => {
    const o = release();
    named(o, 'Job', 'flotilla-ci-migrate').spec.template.spec.containers[0].args = ['api'];
    named(o, 'Secret', 'flotilla-ci-migrate').metadata.annotations['helm.sh/hook-weight'] = '5';
    expect(migrationProblems(o)).toEqual([
      'Job runs ["api"], not migrate',
      'Secret flotilla-ci-migrate is not created before the Job',
    ]);
  });

  it('notices a workload made into a hook', () => {
    const o = release();
    named(o, 'Deployment', 'flotilla-ci-api').metadata.annotations = { 'helm.sh/hook': 'pre-install' };
    expect(migrationProblems(o)).toEqual(['Deployment/flotilla-ci-api is itself a hook']);
  });
});
