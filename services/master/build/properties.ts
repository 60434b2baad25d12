// The properties a build starts with, from where Buildbot takes them: the build set (the
// scheduler's and the force form's), the builder, the build itself and its source stamp,
// and the worker (process/build.py setupProperties, setupWorkerProperties).
import {
  buildsetChangeAuthors,
  buildsetMainSourceStamp,
  getBuildsetProperties,
} from '../../core/data/index.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Properties } from './interpolate.js';

export interface BuildFacts {
  buildid: number;
  number: number;
  bsid: number;
  builderName: string;
  builderProperties: Record<string, unknown>;
  workerName: string;
  workerProperties: Record<string, unknown>;
}

export async function initialProperties(q: Queryable, b: BuildFacts): Promise<Properties> {
  const props: Record<string, readonly [unknown, string]> = { ...(await getBuildsetProperties(q, b.bsid)) };
  const set = (name: string, value: unknown, source: string) => {
    props[name] = [value, source];
  };
  for (const [k, v] of Object.entries(b.builderProperties)) set(k, v, 'Builder');
  set('buildername', b.builderName, 'Builder');
  set('buildnumber', b.number, 'Build');
  const ss = await buildsetMainSourceStamp(q, b.bsid);
  if (ss) {
    set('branch', ss.branch, 'Build');
    set('revision', ss.revision, 'Build');
    set('repository', ss.repository, 'Build');
    set('project', ss.project, 'Build');
    set('codebase', ss.codebase, 'Build');
  }
  // The owners: whoever forced it, or the authors of its changes.
  const owner = props.owner?.[0];
  const owners = typeof owner === 'string' && owner ? [owner] : await buildsetChangeAuthors(q, b.bsid);
  if (owners.length) set('owners', owners, 'Build');
  set('workername', b.workerName, 'Worker');
  for (const [k, v] of Object.entries(b.workerProperties)) set(k, v, 'Worker');
  set('builddir', b.builderName, 'Worker');
  return props;
}
