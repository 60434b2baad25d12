// The properties a build starts with, from where Buildbot takes them: the build set (the
// scheduler's and the force form's), the builder, the build itself and its source stamp,
// and the worker (process/build.py setupProperties, setupWorkerProperties).

import type { Tx } from '../../core/data/index.js';
import { sql } from '../../core/db/pool.js';
import type { Properties } from './interpolate.js';

export interface BuildContext {
  buildid: number;
  number: number;
  bsid: number;
  builderName: string;
  builderProperties: Record<string, unknown>;
  workerName: string;
  workerProperties: Record<string, unknown>;
}

export async function initialProperties(tx: Tx, b: BuildContext): Promise<Properties> {
  const props: Record<string, readonly [unknown, string]> = {};
  const set = (name: string, value: unknown, source: string) => {
    props[name] = [value, source];
  };
  const bs = await tx.q.query(sql`
    SELECT property_name, flotilla.try_json(property_value) AS pair FROM buildset_properties WHERE buildsetid = ${b.bsid}`);
  for (const p of bs)
    if (Array.isArray(p.pair) && p.pair.length === 2) set(p.property_name, p.pair[0], String(p.pair[1]));
  for (const [k, v] of Object.entries(b.builderProperties)) set(k, v, 'Builder');
  set('buildername', b.builderName, 'Builder');
  set('buildnumber', b.number, 'Build');
  const [ss] = await tx.q.query(sql`
    SELECT ss.branch, ss.revision, ss.repository, ss.project, ss.codebase FROM buildset_sourcestamps bss
    JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE bss.buildsetid = ${b.bsid}
    ORDER BY (ss.codebase = '') DESC, bss.id LIMIT 1`);
  if (ss) {
    set('branch', ss.branch, 'Build');
    set('revision', ss.revision, 'Build');
    set('repository', ss.repository, 'Build');
    set('project', ss.project, 'Build');
    set('codebase', ss.codebase, 'Build');
  }
  // The owners: whoever forced it, or the authors of its changes.
  const authors = await tx.q.query(sql`
    SELECT DISTINCT c.author FROM buildset_sourcestamps bss JOIN changes c ON c.sourcestampid = bss.sourcestampid
    WHERE bss.buildsetid = ${b.bsid} ORDER BY c.author`);
  const owner = props.owner?.[0];
  const owners = typeof owner === 'string' && owner ? [owner] : authors.map((a) => a.author as string);
  if (owners.length) set('owners', owners, 'Build');
  set('workername', b.workerName, 'Worker');
  for (const [k, v] of Object.entries(b.workerProperties)) set(k, v, 'Worker');
  set('builddir', b.builderName, 'Worker');
  return props;
}
