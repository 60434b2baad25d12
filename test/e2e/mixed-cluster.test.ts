// A mixed cluster: a real Buildbot 3.7 master and a Flotilla master on one database, both
// configured with the single-branch scheduler `on-main`, which only one of them runs at a
// time (scheduler_masters). A Buildbot master hears of changes only through its own message
// queue, never Flotilla's Redis, and Flotilla hears nothing of Buildbot's; yet every change
// gets exactly one build set, whichever master it was posted to and whichever ran the
// scheduler then (docs/compatibility.md, "A mixed cluster").
//
// Buildbot claims a free scheduler when it starts, then only every five minutes; a Flotilla
// master every few seconds. So Buildbot is given the scheduler by starting it while no
// Flotilla master holds it, and Flotilla takes it back when Buildbot stops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuildbotMaster, startBuildbotMaster } from '../helpers/buildbot-master.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

const BUILDBOT_CONFIG = 'test/e2e/buildbot-master.cfg';
const FLOTILLA = 'flotilla-1';

let c: Cluster;
let bb: BuildbotMaster | undefined;
let m1: MasterProc;

/** The name of the master that runs on-main, or null. */
async function owner(): Promise<string | null> {
  return (await c.get('/schedulers?name=on-main')).schedulers[0]?.master?.name ?? null;
}

const isBuildbot = (name: string | null) => name !== null && bb !== undefined && name.endsWith(`:${bb.dir}`);

async function ownedBy(what: string, holds: (name: string | null) => boolean): Promise<void> {
  await waitFor(`on-main to be run by ${what}`, async () => holds(await owner()), { timeoutMs: 90_000 });
}

/** How many build sets build this revision. */
async function setsOf(revision: string): Promise<number> {
  const sets: any[] = (await c.get('/buildsets')).buildsets;
  return sets.filter((bs) => bs.sourcestamps.some((ss: any) => ss.revision === revision)).length;
}

async function builtOnce(revision: string): Promise<void> {
  await waitFor(`a build set of ${revision}`, async () => (await setsOf(revision)) > 0, {
    timeoutMs: 90_000,
  });
  expect(await setsOf(revision)).toBe(1);
}

/** A change posted to Flotilla's base change hook (an API pod), on main. */
async function postToFlotilla(revision: string): Promise<void> {
  const res = await fetch(`${c.api.base.replace('/api/v2', '')}/change_hook/base`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      author: 'Dev <dev@example.com>',
      comments: 'to Flotilla',
      revision,
      branch: 'main',
    }),
  });
  expect(res.status).toBe(200);
}

async function startBuildbot(): Promise<void> {
  await bb?.stop();
  bb = await startBuildbotMaster(BUILDBOT_CONFIG, c.db.url);
}

async function stopBuildbot(): Promise<void> {
  await bb?.stop();
}

beforeAll(async () => {
  c = await Cluster.start();
  await startBuildbot();
  await ownedBy('the Buildbot master', isBuildbot);
  m1 = await c.startMaster(FLOTILLA);
});
afterAll(async () => {
  await stopBuildbot();
  await c?.stop();
});

describe('a Buildbot master and a Flotilla master on one database', () => {
  it('a change posted to Flotilla while Buildbot runs the scheduler is built when Flotilla takes it over, and what Buildbot built is not built again', async () => {
    await bb!.sendChange({ branch: 'main', revision: 'bb-1' });
    await builtOnce('bb-1');
    await postToFlotilla('fl-1');
    expect(isBuildbot(await owner())).toBe(true);
    await stopBuildbot();
    await ownedBy(FLOTILLA, (name) => name === FLOTILLA);
    // Flotilla weighs changes in id order: once fl-1 has its build set, bb-1 was weighed.
    await builtOnce('fl-1');
    expect(await setsOf('bb-1')).toBe(1);
  });

  it('a change posted to Buildbot while Flotilla runs the scheduler is built by Flotilla', async () => {
    await startBuildbot();
    expect(await owner()).toBe(FLOTILLA);
    await bb!.sendChange({ branch: 'main', revision: 'bb-2' });
    await builtOnce('bb-2');
  });

  it('Flotilla, taking the scheduler back from Buildbot, builds only what Buildbot did not', async () => {
    // Buildbot gets the scheduler: Flotilla hands it back on a clean stop, and a Buildbot
    // master claims what is free when it starts.
    await m1.proc.stop('SIGTERM');
    await ownedBy('no master', (name) => name === null);
    await stopBuildbot();
    await startBuildbot();
    await ownedBy('the Buildbot master', isBuildbot);
    await bb!.sendChange({ branch: 'main', revision: 'bb-3' });
    await builtOnce('bb-3');
    await postToFlotilla('fl-2');
    m1 = await c.startMaster(FLOTILLA);
    await stopBuildbot();
    await ownedBy(FLOTILLA, (name) => name === FLOTILLA);
    await builtOnce('fl-2');
    // Every change before fl-3 was weighed once fl-3 has its build set.
    await postToFlotilla('fl-3');
    await builtOnce('fl-3');
    const counts: Record<string, number> = {};
    for (const revision of ['bb-1', 'fl-1', 'bb-2', 'bb-3', 'fl-2'])
      counts[revision] = await setsOf(revision);
    expect(counts).toEqual({ 'bb-1': 1, 'fl-1': 1, 'bb-2': 1, 'bb-3': 1, 'fl-2': 1 });
  });
});
