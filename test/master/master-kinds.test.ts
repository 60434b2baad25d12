// The kinds of event published on the masters' channel (services/core/events/master-kinds.ts)
// against what every master handler acts on: each handler's own key filter is driven with
// the keys the product publishes (keys.ts' shapes with every event name services/ uses, and
// every key of up to four segments over that vocabulary), and any key a handler acts on must
// be one masters hear. A handler that starts reading a kind the list lacks fails here, before
// a master stops hearing it. Pure logic: no Redis needed (the channel itself is checked in
// test/api/events/ws-protocol.test.ts, the handlers over real Redis in their own tests).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENTS_LOST_KEY } from '../../services/core/events/bus.js';
import * as keys from '../../services/core/events/keys.js';
import { MASTER_KINDS, mastersHear } from '../../services/core/events/master-kinds.js';
import { releasedLockOf } from '../../services/master/builds/locks.js';
import { completionKey } from '../../services/master/builds/steps/trigger.js';
import { clusterActionOf } from '../../services/master/cluster-events.js';
import { newChangeOf } from '../../services/master/old-build-canceller.js';
import { reportJobOf } from '../../services/master/reporters/events.js';
import { schedulerEventOf } from '../../services/master/schedulers/manager.js';

/** Each master handler's filter: true when it acts on an event of this key. */
const handlers: Record<string, (k: string) => boolean> = {
  'cluster-events': (k) => clusterActionOf(k) !== null,
  'schedulers/manager': (k) => schedulerEventOf(k) !== null,
  // A reporter's job needs the entity's ids; every event of a build or request carries them.
  'reporters/events': (k) => reportJobOf({ k, m: { buildrequestid: 1, buildid: 1 } }) !== null,
  'reporters/index': (k) => k === EVENTS_LOST_KEY,
  'old-build-canceller': (k) => newChangeOf(k) !== null,
  'builds/locks': (k) => releasedLockOf(k) !== null,
  'builds/steps/trigger': (k) => k === completionKey(Number(k.split('/')[1])),
};

/** Every `'word'` that ends a list literal in services/: more than the event names. */
function eventNames(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts'))
        for (const m of readFileSync(p, 'utf8').matchAll(/'([a-z_]+)'\]/g)) names.add(m[1]!);
    }
  };
  walk('services');
  return [...names];
}

const ids = ['7'];
const resources = [
  'builders',
  'builds',
  'workers',
  'steps',
  'logs',
  'buildsets',
  'buildrequests',
  'changes',
  'masters',
  'schedulers',
  'changesources',
  'projects',
  'codebases',
  'commits',
  'branches',
  'properties',
  'control',
  'locks',
  'worker',
  'flotilla',
  'events',
];
/** The event names of the publishing sites (`emit(tx, id, 'new')`, `tx.out.addAll(k, 'new', e)`...). */
const events = [
  ...['new', 'finished', 'complete', 'unclaimed', 'claimed', 'cancel', 'stop', 'pause', 'unpause', 'kill'],
  ...['updated', 'update', 'released', 'started', 'stopped', 'connected', 'disconnected', 'lost'],
  ...['append', 'missing', 'state_updated', 'rebuild', 'force', 'set_priority', 'enable'],
];
/** Wider for the keys keys.ts makes: every word services/ ends a list literal with. */
const anyWord = [...new Set([...eventNames(), ...events])];

/** The keys keys.ts makes, under every event name. */
function publishedKeys(): string[] {
  const bases = [
    ...keys.buildKeys({ buildid: 7, builderid: 7, number: 7, workerid: 7 }),
    ...keys.stepKeys({ buildid: 7, stepid: 7 }),
    ...keys.logKeys({ logid: 7, stepid: 7, slug: 'x' }),
    ...keys.buildrequestKeys(7, 7, 7),
    ...[keys.buildsetKeys, keys.changeKeys, keys.masterKeys, keys.builderKeys, keys.schedulerKeys].flatMap(
      (f) => f(7),
    ),
    ...[keys.workerKeys, keys.projectKeys, keys.codebaseKeys, keys.branchKeys].flatMap((f) => f(7)),
    ...keys.commitKeys({ commitid: 7, codebaseid: 7 }),
  ].map((k) => k.join('/'));
  return [...bases.flatMap((b) => anyWord.map((e) => `${b}/${e}`)), keys.buildPropertiesKey(7).join('/')];
}

/**
 * Every key of one to three segments, a resource first, then ids, resources or event names;
 * and of four, with an id or a resource second and third (as every four-part key has them:
 * `builders/7/builds/7`, `control/locks/<name>/released`).
 */
function* everyShortKey(): Generator<string> {
  const rest = [...ids, ...resources, ...events];
  const inner = [...ids, ...resources];
  for (const a of resources) {
    yield a;
    for (const b of rest) {
      yield `${a}/${b}`;
      for (const c of rest) yield `${a}/${b}/${c}`;
    }
    for (const b of inner) for (const c of inner) for (const d of rest) yield `${a}/${b}/${c}/${d}`;
  }
}

describe('the kinds masters hear', () => {
  it('include every key a master handler acts on', () => {
    const missed: string[] = [];
    let acted = 0;
    const check = (k: string) => {
      for (const [name, acts] of Object.entries(handlers))
        if (acts(k)) {
          acted++;
          if (!mastersHear(k.split('/'))) missed.push(`${name}: ${k}`);
        }
    };
    for (const k of [...publishedKeys(), EVENTS_LOST_KEY]) check(k);
    for (const k of everyShortKey()) check(k);
    expect(missed).toEqual([]);
    // The drive reached the handlers: each acted on something.
    expect(acted).toBeGreaterThan(Object.keys(handlers).length);
  });

  it('are each acted on by some handler, and leave out what none acts on', () => {
    for (const pattern of Object.keys(MASTER_KINDS)) {
      // An id for each `*` (a worker's action last).
      const k = pattern === 'control/worker/*/*' ? 'control/worker/7/pause' : pattern.replaceAll('*', '7');
      expect(mastersHear(k.split('/')), k).toBe(true);
      expect(
        Object.values(handlers).some((acts) => acts(k)),
        `${pattern}: no handler acts on ${k}`,
      ).toBe(true);
    }
    // Most of a build's events: its steps', logs', the build's own other keys.
    for (const k of [
      ['steps', 7, 'new'],
      ['builds', 7, 'steps', 7, 'finished'],
      ['logs', 7, 'append'],
      ['steps', 7, 'logs', 'stdio', 'new'],
      ['builders', 7, 'builds', 7, 'new'],
      ['workers', 7, 'builds', 7, 'finished'],
      ['builds', 7, 'properties', 'update'],
      ['buildrequests', 7, 'claimed'],
      ['buildsets', 7, 'builders', 7, 'buildrequests', 7, 'new'],
    ])
      expect(mastersHear(k), k.join('/')).toBe(false);
  });
});
