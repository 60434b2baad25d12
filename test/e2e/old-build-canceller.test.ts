// Buildbot's OldBuildCanceller on a real cluster: two masters, the worker on the second, so
// that the build a newer change supersedes runs on a master that may not be the one acting
// (each master hears the change; one acts, old-build-canceller.ts). A newer change on a branch
// stops that branch's running build and cancels its pending request, both CANCELLED with
// Buildbot's reason; the work of another branch is left alone.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Results } from '../../services/core/results.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster } from './cluster.js';

const REPO = 'https://git.example.com/cancel.git';

const config = `
workers:
  - { name: w1, password_env: W1_PASSWORD, max_builds: 1 }
  - { name: offline, password: never-connects }
builders:
  - name: superseded-run
    workers: [w1]
    steps: [{ type: shell, name: wait, command: "echo started; sleep 120" }]
  - name: superseded-queue
    workers: [offline]
    steps: [{ type: shell, name: never, command: "echo never" }]
schedulers:
  - { type: any-branch, name: every-branch, builders: [superseded-run, superseded-queue] }
services:
  - type: old_build_canceller
    name: canceller
    filters: [{ builders: [superseded-run, superseded-queue], repository: ${JSON.stringify(REPO)} }]
change_hooks:
  base: { enabled: true }
`;

let c: Cluster;
beforeAll(async () => {
  c = await Cluster.start({ baseYaml: config });
  await c.startMaster('cancel-m1');
  const m2 = await c.startMaster('cancel-m2');
  await c.startWorker('w1', m2);
}, 300_000);
afterAll(async () => {
  await c?.stop();
});

async function change(branch: string, revision: string): Promise<void> {
  const res = await fetch(`${c.api.base.replace('/api/v2', '')}/change_hook/base`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      author: 'Dev <dev@example.com>',
      revision,
      branch,
      repository: REPO,
    }).toString(),
  });
  expect(res.status).toBe(200);
}

/** The requests (by builder name) of the build set made for a revision, once there is one. */
async function requestsOf(revision: string): Promise<Record<string, any>> {
  const builders = Object.fromEntries(
    (await c.get('/builders')).builders.map((b: any) => [b.builderid, b.name as string]),
  );
  let brs: any[] = [];
  await waitFor(`the requests of ${revision}`, async () => {
    const sets = (await c.get('/buildsets')).buildsets as any[];
    const bs = sets.find((s) => s.sourcestamps.some((ss: any) => ss.revision === revision));
    if (!bs) return false;
    brs = (await c.get(`/buildrequests?buildsetid=${bs.bsid}`)).buildrequests;
    return brs.length === 2;
  });
  return Object.fromEntries(brs.map((br) => [builders[br.builderid], br]));
}

it('a newer change on a branch stops its running build and cancels its pending request; another branch is untouched', async () => {
  await change('feature', 'f1');
  const old = await requestsOf('f1');
  const running = await c.buildOf(old['superseded-run'].buildrequestid);
  await waitFor('the old build to run its command', async () => {
    const steps = (await c.get(`/builds/${running.buildid}/steps`)).steps as any[];
    return steps[0]?.started_at != null;
  });

  await change('other', 'o1');
  const other = await requestsOf('o1');

  await change('feature', 'f2');
  const stopped = await c.finished(running.buildid);
  expect(stopped.results).toBe(Results.CANCELLED);
  expect(stopped.state_string).toContain('cancelled (Build has been obsoleted by a newer commit)');
  await waitFor('the old pending request to be cancelled', async () => {
    const br = (await c.get(`/buildrequests/${old['superseded-queue'].buildrequestid}`)).buildrequests[0];
    return br.complete && br.results === Results.CANCELLED;
  });

  // The other branch's requests and the newer change's are not cancelled: the freed worker
  // takes one of them, and the offline worker's stay pending.
  const fresh = await requestsOf('f2');
  for (const br of [...Object.values(other), ...Object.values(fresh)]) {
    const now = (await c.get(`/buildrequests/${br.buildrequestid}`)).buildrequests[0];
    expect(now.results).not.toBe(Results.CANCELLED);
  }
  const queued = (await c.get(`/buildrequests/${other['superseded-queue'].buildrequestid}`)).buildrequests[0];
  expect(queued.complete).toBe(false);
});
