// A lock held by a master killed with SIGKILL is freed by that master's expiry: a build on
// another master waiting for it gets it then, and not before (the dead master's build is
// not known to be dead until its master is expired).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockHolders } from '../../services/core/data/index.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

// The shortest expiry that master.yaml's worker_silence_seconds (4) allows: a frozen master's
// commands must have been killed before it is expired (services/master/liveness.ts).
const EXPIRY_SECONDS = 10;

let c: Cluster;
let m1: MasterProc;
beforeAll(async () => {
  c = await Cluster.start({
    masterExpirySeconds: EXPIRY_SECONDS,
    // One build at a time on w1, so that the second build is m2's.
    configure: (yaml) =>
      yaml
        .replace(
          '{ name: w1, password_env: W1_PASSWORD, max_builds: 2',
          '{ name: w1, password_env: W1_PASSWORD, max_builds: 1',
        )
        .replace(
          '\nbuilders:\n',
          `\nbuilders:
  - name: locked
    workers: [w1, w2]
    locks: [{ lock: solo, mode: exclusive }]
    steps:
      - { type: shell, name: hold, command: "echo holding; sleep 120" }
`,
        )
        .replace(
          '\nforce_schedulers:\n',
          '\nforce_schedulers:\n  - { name: force-locked, builders: [locked] }\n',
        ),
    extraYaml: 'locks: [{ name: solo, type: master }]',
  });
  m1 = await c.startMaster('m1');
  await c.startWorker('w1', m1);
}, 120_000);
afterAll(async () => {
  await c?.stop();
});

const masterId = async (name: string) => (await c.get(`/masters?name=${name}`)).masters[0].masterid as number;

describe('a lock held by a master killed with SIGKILL', () => {
  it('is freed by its expiry, and the build waiting for it on another master runs then', async () => {
    const [, first] = await c.force('force-locked');
    const a = await c.buildOf(Object.values(first)[0]!);
    const m1id = await masterId('m1');
    await waitFor('the first build to hold the lock', async () => {
      const steps = (await c.get(`/builds/${a.buildid}/steps`)).steps;
      return steps.some((s: any) => s.name === 'hold' && s.started_at !== null);
    });
    expect((await lockHolders(c.db.pool, 'solo')).map((h) => h.masterid)).toEqual([m1id]);

    const m2 = await c.startMaster('m2');
    await c.startWorker('w2', m2);
    const m2id = await masterId('m2');
    const [, second] = await c.force('force-locked');
    const b = await c.buildOf(Object.values(second)[0]!);
    expect(b.masterid).toBe(m2id);
    await waitFor('the second build to wait for the lock', async () => {
      return (await c.get(`/builds/${b.buildid}`)).builds[0].state_string === 'acquiring locks';
    });

    await m1.proc.stop('SIGKILL');
    const deadline = EXPIRY_SECONDS * 1000 * 5;
    await waitFor(
      'the second build to get the lock',
      async () => {
        const steps = (await c.get(`/builds/${b.buildid}/steps`)).steps;
        return steps.some((s: any) => s.name === 'hold' && s.started_at !== null);
      },
      { timeoutMs: deadline },
    );
    // Not before m1 was expired: its silence alone proves nothing for EXPIRY_SECONDS. Read
    // from the times the cluster recorded (whole seconds), not the test's clock.
    const dead = (await c.get(`/masters/${m1id}`)).masters[0];
    expect(dead.active).toBe(false);
    const held = (await c.get(`/builds/${b.buildid}/steps`)).steps.find((s: any) => s.name === 'hold');
    expect(held.started_at).toBeGreaterThanOrEqual(dead.last_active + EXPIRY_SECONDS - 1);
    const holders = await lockHolders(c.db.pool, 'solo');
    expect(holders.map((h) => [h.masterid, h.holder])).toEqual([[m2id, `build ${b.buildid}`]]);
  }, 180_000);
});
