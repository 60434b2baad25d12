// Nothing runs as root: every pod and every container (init containers and the migration
// Job included) runs as a non-root user, without privilege escalation or capabilities,
// on a read-only root filesystem, and without a ServiceAccount token it has no use for.
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, render, template } from './lib/helm.js';
import { label, type Workload, workloads } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

function securityProblems(w: Workload): string[] {
  const problems: string[] = [];
  const pod = w.pod.securityContext ?? {};
  const say = (where: string, what: string) => problems.push(`${label(w)}${where}: ${what}`);
  if (pod.runAsNonRoot !== true) say('', 'pod runAsNonRoot is not true');
  if (!(pod.runAsUser > 0)) say('', `pod runAsUser is ${pod.runAsUser}`);
  if (pod.seccompProfile?.type !== 'RuntimeDefault') say('', 'pod seccomp profile is not RuntimeDefault');
  if (w.pod.automountServiceAccountToken !== false) say('', 'mounts a ServiceAccount token');
  if (w.pod.hostNetwork || w.pod.hostPID || w.pod.hostIPC) say('', 'shares a host namespace');
  for (const c of [...(w.pod.initContainers ?? []), ...w.pod.containers]) {
    const s = c.securityContext ?? {};
    const where = ` container ${c.name}`;
    // A container's own settings win over the pod's.
    if ((s.runAsNonRoot ?? pod.runAsNonRoot) !== true) say(where, 'runAsNonRoot is not true');
    const uid = s.runAsUser ?? pod.runAsUser;
    if (!(uid > 0)) say(where, `runs as uid ${uid}`);
    if (s.allowPrivilegeEscalation !== false) say(where, 'allows privilege escalation');
    if (s.privileged === true) say(where, 'is privileged');
    if (s.readOnlyRootFilesystem !== true) say(where, 'has a writable root filesystem');
    if (!s.capabilities?.drop?.includes('ALL')) say(where, 'keeps capabilities');
    if (s.capabilities?.add?.length) say(where, 'adds capabilities');
  }
  return problems;
}

describe.each(CI_VALUES.map((f) => [basename(f), f]))('%s', (_name, file) => {
  it('runs nothing as root', () => {
    const all = workloads(render([file]));
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all.flatMap(securityProblems)).toEqual([]);
  });

  it('mounts a writable emptyDir at /tmp in every container (the root filesystem is read-only)', () => {
    for (const w of workloads(render([file]))) {
      const emptyDirs = new Set(w.pod.volumes.filter((v: any) => v.emptyDir).map((v: any) => v.name));
      for (const c of w.pod.containers) {
        const tmp = c.volumeMounts?.find((m: any) => m.mountPath === '/tmp');
        expect(tmp && emptyDirs.has(tmp.name), `${label(w)} ${c.name}`).toBe(true);
      }
    }
  });
});

describe('the security check', () => {
  const worker = () =>
    workloads(render([CI_VALUES[0]!])).find((w) => w.object.metadata.name.endsWith('-worker'))!;

  it('notices a container that runs as root', () => {
    const w = worker();
    w.pod.initContainers[0].securityContext.runAsUser = 0;
    expect(securityProblems(w)).toEqual(['StatefulSet/flotilla-ci-worker container password: runs as uid 0']);
  });

  it('notices a container that inherits a root pod', () => {
    const w = worker();
    w.pod.securityContext.runAsUser = 0;
    delete w.pod.containers[0].securityContext.runAsUser;
    expect(securityProblems(w)).toEqual([
      'StatefulSet/flotilla-ci-worker: pod runAsUser is 0',
      'StatefulSet/flotilla-ci-worker container worker: runs as uid 0',
    ]);
  });

  it('notices escalation, writable roots and kept capabilities', () => {
    const w = worker();
    w.pod.containers[0].securityContext = { runAsNonRoot: true };
    expect(securityProblems(w)).toEqual([
      'StatefulSet/flotilla-ci-worker container worker: allows privilege escalation',
      'StatefulSet/flotilla-ci-worker container worker: has a writable root filesystem',
      'StatefulSet/flotilla-ci-worker container worker: keeps capabilities',
    ]);
  });

  it('values cannot ask for root', () => {
    const r = template([CI_VALUES[0]!, { securityContext: { runAsUser: 0 } }]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('runAsUser');
  });
});
