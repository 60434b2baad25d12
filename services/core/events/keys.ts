// Buildbot 3.7's routing keys, one function per resource type. Each returns the keys an event
// of that resource is produced under (the event name, `new`, `finished`..., is appended by
// the caller), in the order of the resource's `eventPathPatterns` (buildbot/data/*.py), since
// Buildbot produces one message per pattern, in that order.
import type { RoutingKey } from './bus.js';

/** builds: /builders/:builderid/builds/:number, /builds/:buildid, /workers/:workerid/builds/:buildid */
export function buildKeys(b: {
  buildid: number;
  builderid: number;
  number: number;
  workerid: number | null;
}): RoutingKey[] {
  const keys: RoutingKey[] = [
    ['builders', b.builderid, 'builds', b.number],
    ['builds', b.buildid],
  ];
  // Buildbot would format a missing worker as "None"; a build whose worker row was deleted
  // (workerid set NULL) simply has no worker path.
  if (b.workerid !== null) keys.push(['workers', b.workerid, 'builds', b.buildid]);
  return keys;
}

/** steps: /builds/:buildid/steps/:stepid, /steps/:stepid */
export function stepKeys(s: { buildid: number; stepid: number }): RoutingKey[] {
  return [
    ['builds', s.buildid, 'steps', s.stepid],
    ['steps', s.stepid],
  ];
}

/** logs: /logs/:logid, /steps/:stepid/logs/:slug */
export function logKeys(l: { logid: number; stepid: number; slug: string }): RoutingKey[] {
  return [
    ['logs', l.logid],
    ['steps', l.stepid, 'logs', l.slug],
  ];
}

/** buildrequests: /buildsets/:buildsetid/builders/:builderid/buildrequests/:buildrequestid, ... */
export function buildrequestKeys(bsid: number, builderid: number, brid: number): RoutingKey[] {
  return [
    ['buildsets', bsid, 'builders', builderid, 'buildrequests', brid],
    ['buildrequests', brid],
    ['builders', builderid, 'buildrequests', brid],
  ];
}

export const buildsetKeys = (bsid: number): RoutingKey[] => [['buildsets', bsid]];
export const changeKeys = (changeid: number): RoutingKey[] => [['changes', changeid]];
export const masterKeys = (masterid: number): RoutingKey[] => [['masters', masterid]];
export const builderKeys = (builderid: number): RoutingKey[] => [['builders', builderid]];
export const schedulerKeys = (schedulerid: number): RoutingKey[] => [['schedulers', schedulerid]];
export const workerKeys = (workerid: number): RoutingKey[] => [['workers', workerid]];
/** Buildbot 4.3's projects: /projects/:projectid */
export const projectKeys = (projectid: number): RoutingKey[] => [['projects', projectid]];
/** Buildbot 4.3's codebases: /codebases/:codebaseid */
export const codebaseKeys = (codebaseid: number): RoutingKey[] => [['codebases', codebaseid]];
/** Buildbot 4.3's commits: /commits/:commitid, /codebases/:codebaseid/commits/:commitid */
export const commitKeys = (c: { commitid: number; codebaseid: number }): RoutingKey[] => [
  ['commits', c.commitid],
  ['codebases', c.codebaseid, 'commits', c.commitid],
];
/** Buildbot 4.3's branches: /branches/:branchid */
export const branchKeys = (branchid: number): RoutingKey[] => [['branches', branchid]];

/** Build properties: a dictionary, not an entity; Buildbot produces it under one key. */
export const buildPropertiesKey = (buildid: number): RoutingKey => [
  'builds',
  buildid,
  'properties',
  'update',
];
