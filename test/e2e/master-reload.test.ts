// Masters reload their configuration (issue 33 §3; services/master/reconfigure.ts): real
// master, worker and API processes, builds forced through the API. A SIGHUP adds a builder
// and its force scheduler; a build that started keeps the steps it started with while the
// next one gets the new; a removed builder's running build finishes; a bad file, or one that
// changes what needs a restart, is refused and the old configuration keeps running under its
// hash; a swap of the mounted file reloads without a signal. Then a rollout: two masters on
// different versions of the file, builds forced while the second one reloads, each request
// built exactly once.
//
// The master's MASTER_CONFIG is laid out as a mounted ConfigMap (`mount/master.yaml`, a
// symlink into `data/`): writing the file in `data/` changes nothing in the folder the master
// watches, so only the SIGHUP reloads it; replacing the symlink is the change Kubernetes makes.
// The API reads the cluster's own file and reloads it as it changes (for the force schedulers).
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMasterConfig } from '../../services/core/config/master-config.js';
import { configVersion } from '../../services/core/config/version.js';
import { sql } from '../../services/core/db/pool.js';
import { type BuilderOverride, type ConfigOverride, masterYaml } from '../helpers/master-config.js';
import { sample } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

let c: Cluster;
let m1: MasterProc;
let mount: string;
let gates: string;

/** A builder whose first step waits for `gate` to exist, then a step named `tail`. */
function gated(name: string, worker: string, gate: string, tail: string): BuilderOverride {
  return {
    name,
    workers: [worker],
    steps: [
      { type: 'shell', name: 'wait', command: `until [ -f ${join(gates, gate)} ]; do sleep 0.1; done` },
      { type: 'shell', name: tail, command: `echo ${tail}` },
    ],
  };
}

const force = (builder: string) => ({ name: `force-${builder}`, builders: [builder] });

/** The versions of the file the tests go through, each an override of test/e2e/master.yaml. */
function version(
  steps: { tail: string; doomed: boolean; added: boolean; extra?: BuilderOverride[] },
  more: ConfigOverride = {},
): string {
  const builders: BuilderOverride[] = [
    gated('gated', 'w1', 'gate1', steps.tail),
    ...(steps.doomed ? [gated('doomed', 'w2', 'gate2', 'done')] : []),
    ...(steps.added
      ? [{ name: 'added', workers: ['w1'], steps: [{ type: 'shell' as const, command: 'true' }] }]
      : []),
    ...(steps.extra ?? []),
  ];
  return masterYaml({
    builders,
    force_schedulers: builders.map((b) => force(b.name!)),
    ...more,
  });
}

const V1 = () => version({ tail: 'tail-one', doomed: true, added: false });
const V2 = () => version({ tail: 'tail-one', doomed: true, added: true });
const V3 = () => version({ tail: 'tail-two', doomed: true, added: true });
const V4 = () => version({ tail: 'tail-two', doomed: false, added: true });
const QUICK = { name: 'spread', workers: ['q1', 'q2'], steps: [{ type: 'shell' as const, command: 'true' }] };
const V5 = () =>
  version({ tail: 'tail-two', doomed: false, added: true, extra: [{ ...QUICK, name: 'watched' }] });
const V6 = () =>
  version({ tail: 'tail-two', doomed: false, added: true, extra: [{ ...QUICK, name: 'watched' }, QUICK] });

// A worker added, with a builder of its own, then both removed (V8 is V6 again).
const V7 = () =>
  version(
    {
      tail: 'tail-two',
      doomed: false,
      added: true,
      extra: [{ ...QUICK, name: 'watched' }, QUICK, gated('temporary', 'temp', 'gate3', 'done')],
    },
    { workers: [{ name: 'temp', password: 'q' }] },
  );

// Written outside the folder the API watches: a file written there at each look of a waitFor
// kept that folder busy (services/core/config/reload.ts).
const hashOf = (yaml: string) => {
  const file = join(c.dir, 'scratch', 'hash.yaml');
  writeFileSync(file, yaml);
  return configVersion(loadMasterConfig(file)).hash;
};

async function readyHash(probePort: number): Promise<string> {
  const ready = (await (await fetch(`http://127.0.0.1:${probePort}/readyz`)).json()) as {
    config?: { hash: string };
  };
  return ready.config?.hash ?? '';
}

/** The master's file (in data/, under the symlink): written, the master not told. */
const masterFile = () => join(c.dir, 'data', 'master.yaml');

/** The master's file rewritten and SIGHUP sent; the API's file too. Resolves once both run it. */
async function reload(yaml: string, m = m1, file = masterFile()): Promise<void> {
  writeFileSync(file, yaml);
  writeFileSync(c.config, yaml);
  process.kill(m.proc.pid, 'SIGHUP');
  const hash = hashOf(yaml);
  await waitFor('the master to run the new file', async () => (await readyHash(m.probePort)) === hash, {
    proc: m.proc,
  });
  await waitFor('the API to run the new file', async () => (await readyHash(c.api.probePort)) === hash, {
    proc: c.api.proc,
  });
}

async function forced(builder: string): Promise<number> {
  const [, brids] = await c.force(`force-${builder}`);
  return Object.values(brids)[0]!;
}

async function stepNames(buildid: number): Promise<string[]> {
  return (await c.get(`/builds/${buildid}/steps`)).steps.map((s: { name: string }) => s.name);
}

async function masterAudit(): Promise<{ actor: string; outcome: string }[]> {
  return (await c.db.pool.query(sql`
    SELECT actor, outcome FROM flotilla.audit_log WHERE path = ${mount} ORDER BY id`)) as {
    actor: string;
    outcome: string;
  }[];
}

beforeAll(async () => {
  c = await Cluster.start();
  gates = join(c.dir, 'gates');
  for (const d of ['data', 'mount', 'gates', 'scratch']) mkdirSync(join(c.dir, d));
  mount = join(c.dir, 'mount', 'master.yaml');
  writeFileSync(masterFile(), V1());
  writeFileSync(c.config, V1());
  symlinkSync(masterFile(), mount);
  // The API started on the base file: it runs V1 once it has seen the change.
  await waitFor(
    'the API on the first version',
    async () => (await readyHash(c.api.probePort)) === hashOf(V1()),
  );
  m1 = await c.startMaster('m1', { MASTER_CONFIG: mount });
  await c.startWorker('w1', m1);
  await c.startWorker('w2', m1);
}, 240_000);
afterAll(async () => {
  await c?.stop();
});

describe('a master whose configuration changes', () => {
  it('adds a builder and its force scheduler on SIGHUP, and builds it', async () => {
    await reload(V2());
    const metrics = await (await fetch(`http://127.0.0.1:${m1.probePort}/metrics`)).text();
    expect(sample(metrics, 'flotilla_config_info', { hash: hashOf(V2()) })).toBe(1);
    expect(metrics).not.toContain(hashOf(V1()));
    const build = await c.finished((await c.buildOf(await forced('added'))).buildid);
    expect(build.results).toBe(0);
    const [builder] = (await c.get('/builders?name=added')).builders;
    expect(builder.masterids).toHaveLength(1);
  }, 180_000);

  it('lets a running build keep the steps it started with; the next build gets the new ones', async () => {
    const running = await c.buildOf(await forced('gated'));
    await reload(V3());
    writeFileSync(join(gates, 'gate1'), '');
    const first = await c.finished(running.buildid);
    expect(first.results).toBe(0);
    // After the worker's preparation step, as Buildbot names it.
    expect((await stepNames(running.buildid)).slice(-2)).toEqual(['wait', 'tail-one']);
    const next = await c.finished((await c.buildOf(await forced('gated'))).buildid);
    expect((await stepNames(next.buildid)).slice(-2)).toEqual(['wait', 'tail-two']);
  }, 180_000);

  it('lets a removed builder’s running build finish', async () => {
    const brid = await forced('doomed');
    const running = await c.buildOf(brid);
    await reload(V4());
    const [builder] = (await c.get('/builders?name=doomed')).builders;
    expect(builder.masterids).toEqual([]);
    expect(running.complete).toBe(false);
    writeFileSync(join(gates, 'gate2'), '');
    expect((await c.finished(running.buildid)).results).toBe(0);
    expect((await c.get(`/buildrequests/${brid}/builds`)).builds).toHaveLength(1);
  }, 180_000);

  it('refuses a bad file, or one that needs a restart, and keeps running the one it has', async () => {
    const hash = hashOf(V4());
    for (const [yaml, code] of [
      [`${V4()}\nno_such_key: 1\n`, 'CONFIG_SCHEMA'],
      [masterYaml({ log_compression: 'none' }, V4()), 'CONFIG_RESTART_REQUIRED'],
    ] as const) {
      writeFileSync(masterFile(), yaml);
      process.kill(m1.proc.pid, 'SIGHUP');
      // Its audit row and its log line: the line reaches this process through a pipe, after
      // the row may already be read (a CI run, 2026-11-30, found the row and not yet the line).
      await waitFor(
        `the refusal (${code}), recorded and logged`,
        async () => m1.proc.output().includes(code) && (await masterAudit()).some((r) => r.outcome === code),
        { proc: m1.proc },
      );
      expect(await readyHash(m1.probePort)).toBe(hash);
    }
    expect((await masterAudit()).filter((r) => r.outcome !== 'success')).toEqual([
      { actor: 'SIGHUP', outcome: 'CONFIG_SCHEMA' },
      { actor: 'SIGHUP', outcome: 'CONFIG_RESTART_REQUIRED' },
    ]);
    // The old configuration still builds.
    expect((await c.finished((await c.buildOf(await forced('added'))).buildid)).results).toBe(0);
    writeFileSync(masterFile(), V4());
  }, 180_000);

  it('reloads when the mounted file is swapped, with no signal', async () => {
    const next = join(c.dir, 'data', 'v5.yaml');
    writeFileSync(next, V5());
    const link = join(c.dir, 'mount', '.swap');
    symlinkSync(next, link);
    renameSync(link, mount);
    const hash = hashOf(V5());
    await waitFor(
      'the master to run the swapped file',
      async () => (await readyHash(m1.probePort)) === hash,
      {
        proc: m1.proc,
      },
    );
    // Written once the reload is done, which the hash shows a moment before.
    await waitFor('the reload in the audit log', async () => {
      const last = (await masterAudit()).at(-1);
      return last?.actor === 'file' && last.outcome === 'success';
    });
    expect((await c.get('/builders?name=watched')).builders[0].masterids).toHaveLength(1);
  }, 180_000);
});

describe('a rollout: two masters on different versions of the file', () => {
  it('builds each forced request exactly once while the second master reloads', async () => {
    // m2 on V5 (no `spread`); m1 and the API move to V6 (`spread` on q1, of m1, and q2, of m2).
    const m2File = join(c.dir, 'data', 'm2.yaml');
    writeFileSync(m2File, V5());
    const m2 = await c.startMaster('m2', { MASTER_CONFIG: m2File });
    await c.startWorker('q1', m1);
    await c.startWorker('q2', m2);
    await reload(V6(), m1, join(c.dir, 'data', 'v5.yaml'));
    const masterid = async (name: string) =>
      (await c.get('/masters')).masters.find((m: { name: string }) => m.name === name).masterid as number;
    const [id1, id2] = [await masterid('m1'), await masterid('m2')];

    const FIRST = 4;
    // Built before m2 knows the builder: none there, though its worker q2 is idle all along.
    const before = await Promise.all(Array.from({ length: FIRST }, () => forced('spread')));
    await Promise.all(before.map(async (brid) => c.finished((await c.buildOf(brid)).buildid)));
    const early = await c.db.pool.query(sql`
      SELECT DISTINCT masterid FROM builds WHERE buildrequestid = ANY(${before}::int[])`);
    expect(early.map((r: { masterid: number }) => r.masterid)).toEqual([id1]);
    // The second master reloads while more are forced, and the first is told again meanwhile.
    const during = Promise.all(Array.from({ length: 2 * FIRST }, () => forced('spread')));
    process.kill(m1.proc.pid, 'SIGHUP');
    await reload(V6(), m2, m2File);
    const brids = [...before, ...(await during)];

    const builds = await Promise.all(brids.map(async (brid) => c.finished((await c.buildOf(brid)).buildid)));
    expect(builds.every((b) => b.results === 0)).toBe(true);
    const [row] = await c.db.pool.query(sql`
      SELECT count(*)::int AS builds, count(DISTINCT buildrequestid)::int AS requests
      FROM builds WHERE buildrequestid = ANY(${brids}::int[])`);
    expect(row).toEqual({ builds: brids.length, requests: brids.length });
    const requests = await c.db.pool.query(sql`
      SELECT count(*)::int AS n FROM buildrequests WHERE id = ANY(${brids}::int[]) AND complete = 1 AND results = 0`);
    expect(requests[0].n).toBe(brids.length);
    expect((await c.get('/builders?name=spread')).builders[0].masterids.sort()).toEqual([id1, id2].sort());
  }, 240_000);
});

describe('a worker removed from the configuration', () => {
  it('keeps its connection until its build has ended, then is let go', async () => {
    const file = join(c.dir, 'data', 'v5.yaml');
    await reload(V7(), m1, file);
    const temp = await c.startWorker('temp', m1);
    const running = await c.buildOf(await forced('temporary'));
    await reload(V6(), m1, file);
    const connected = async () => (await c.get('/workers?name=temp')).workers[0].connected_to.length > 0;
    // Its build runs on: the worker is still there, and the build ends as it would have.
    expect(await connected()).toBe(true);
    writeFileSync(join(gates, 'gate3'), '');
    expect((await c.finished(running.buildid)).results).toBe(0);
    await waitFor('the removed worker to be let go', async () => !(await connected()));
    // Told to shut down, it exits instead of coming back.
    await waitFor('the worker process to exit', async () => temp.child.exitCode !== null);
  }, 180_000);
});
