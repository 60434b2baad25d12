// The properties a build starts with, from where Buildbot takes them, in its order: the
// global ones (c['properties'], whose source Buildbot names after the configuration file,
// `master.cfg`), the build set (the scheduler's and the force form's), the builder (its
// properties, then its defaultProperties where nothing set them, and its project: Buildbot
// 4.3's projectid and projectname), the build itself and its source stamp, and the worker
// (process/build.py setupPropertiesKnownBeforeBuildStarts, process/builder.py
// setupProperties, setupWorkerProperties).
import { buildStartFacts } from '../../core/data/index.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Properties } from './interpolate.js';

export interface BuildFacts {
  buildid: number;
  number: number;
  bsid: number;
  builderName: string;
  /** The configuration's global properties (Buildbot's c['properties']). */
  globalProperties: Record<string, unknown>;
  builderProperties: Record<string, unknown>;
  /** The builder's defaultProperties. */
  builderDefaultProperties: Record<string, unknown>;
  workerName: string;
  workerProperties: Record<string, unknown>;
  /** The builder's directory on the worker, absolute; null when the worker did not say its own. */
  builddir: string | null;
}

/** The source of the global properties: Buildbot names it after its configuration file. */
export const GLOBAL_SOURCE = 'master.cfg';

export async function initialProperties(q: Queryable, b: BuildFacts): Promise<Properties> {
  const props: Record<string, readonly [unknown, string]> = {};
  const set = (name: string, value: unknown, source: string) => {
    props[name] = [value, source];
  };
  // Read in one statement (core/data/build-start.ts says why).
  const facts = await buildStartFacts(q, b.buildid, b.bsid);
  for (const [k, v] of Object.entries(b.globalProperties)) set(k, v, GLOBAL_SOURCE);
  Object.assign(props, facts.buildsetProperties);
  set('buildername', b.builderName, 'Builder');
  for (const [k, v] of Object.entries(b.builderProperties)) set(k, v, 'Builder');
  for (const [k, v] of Object.entries(b.builderDefaultProperties))
    if (!Object.hasOwn(props, k)) set(k, v, 'Builder');
  const project = facts.project;
  if (project) {
    set('projectid', project.id, 'Builder');
    set('projectname', project.name, 'Builder');
  }
  set('buildnumber', b.number, 'Build');
  const ss = facts.sourcestamp;
  if (ss) {
    set('branch', ss.branch, 'Build');
    set('revision', ss.revision, 'Build');
    set('repository', ss.repository, 'Build');
    set('project', ss.project, 'Build');
    set('codebase', ss.codebase, 'Build');
  }
  // The owners: the authors of its changes and whoever forced it, sorted, as Buildbot's
  // setupBuild gathers them; an owner property is kept whatever it holds, even an empty
  // name (a force by no one in particular makes [""]).
  const owners = new Set<string>(facts.authors);
  const owner = props.owner?.[0];
  if (typeof owner === 'string') owners.add(owner);
  if (owners.size) set('owners', [...owners].sort(), 'Build');
  set('workername', b.workerName, 'Worker');
  for (const [k, v] of Object.entries(b.workerProperties)) set(k, v, 'Worker');
  // As Buildbot: absolute on the worker, and left unset when the worker's base directory is unknown.
  if (b.builddir !== null) set('builddir', b.builddir, 'Worker');
  return props;
}
