// Artifacts (Flotilla's, not Buildbot's: services/core/data/artifacts.ts): what a build's
// transfer steps uploaded, listed by build and by step, one by id, and downloaded whole from
// `artifacts/{artifactid}/raw` (the link the uploading step carries). Only complete ones
// exist here. These paths are unlisted: /application.spec stays Buildbot's.
import { sql } from '../../../core/db/pool.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, PathArgs, Resource } from '../model.js';
import { buildIdOf } from './builds.js';

export const artifact: Resource = {
  name: 'artifact',
  plural: 'artifacts',
  key: 'artifactid',
  from: sql`flotilla.artifacts a`,
  fields: [
    field('artifactid', t.integer, sql`a.id`),
    field('buildid', t.integer, sql`a.buildid`),
    field('stepid', t.integer, sql`a.stepid`),
    field('name', t.string, sql`a.name`),
    // 'file', or 'directory' (a tar archive; compress: null, 'gz' or 'bz2').
    field('kind', t.string, sql`a.kind`),
    field('compress', t.string, sql`a.compress`, { nullable: true }),
    field('mode', t.integer, sql`a.mode`, { nullable: true }),
    field('length', t.integer, sql`a.length`),
    field('created_at', t.datetime, sql`a.created_at`),
  ],
};

const complete = sql`a.complete`;
const byId = (a: PathArgs) => [complete, sql`a.id = ${a.artifactid}`];

const list = (pattern: string, scope: (a: PathArgs) => ReturnType<typeof sql>): Endpoint => ({
  pattern,
  resource: artifact,
  collection: true,
  kind: 'rows',
  unlisted: true,
  scope: (a) => [complete, scope(a)],
});

export const artifactEndpoints: Endpoint[] = [
  list('builds/n:buildid/artifacts', (a) => sql`a.buildid = ${buildIdOf(a)}`),
  list('builders/n:builderid/builds/n:build_number/artifacts', (a) => sql`a.buildid = ${buildIdOf(a)}`),
  list('builders/s:buildername/builds/n:build_number/artifacts', (a) => sql`a.buildid = ${buildIdOf(a)}`),
  list('steps/n:stepid/artifacts', (a) => sql`a.stepid = ${a.stepid}`),
  {
    pattern: 'artifacts/n:artifactid',
    resource: artifact,
    collection: false,
    kind: 'rows',
    unlisted: true,
    scope: byId,
  },
  {
    pattern: 'artifacts/n:artifactid/raw',
    resource: artifact,
    collection: false,
    kind: 'artifact-raw',
    unlisted: true,
    scope: byId,
  },
];
