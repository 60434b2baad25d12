import { sql } from '../../../core/db/pool.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, PathArgs, Resource } from '../model.js';
import { buildIdOf } from './builds.js';

// Listing build data never carries the value: it can be large. The `value` path downloads it.
export const buildData: Resource = {
  name: 'build_data',
  plural: 'build_data',
  key: 'name',
  from: sql`build_data a`,
  fields: [
    field('buildid', t.integer, sql`a.buildid`),
    field('name', t.string, sql`a.name::text`),
    field('length', t.integer, sql`a.length`),
    field('value', t.binary, sql`NULL::text`, { nullable: true }),
    field('source', t.string, sql`a.source::text`),
  ],
};

const prefixes = [
  'builders/n:builderid/builds/n:build_number/data',
  'builders/s:buildername/builds/n:build_number/data',
  'builds/n:buildid/data',
];
const inBuild = (a: PathArgs) => sql`a.buildid = ${buildIdOf(a)}`;
const named = (a: PathArgs) => [inBuild(a), sql`a.name = ${a.name}`];

export const buildDataEndpoints: Endpoint[] = [
  ...prefixes.map(
    (p): Endpoint => ({
      pattern: p,
      resource: buildData,
      collection: true,
      kind: 'rows',
      scope: (a) => [inBuild(a)],
    }),
  ),
  ...prefixes.map(
    (p): Endpoint => ({
      pattern: `${p}/i:name`,
      resource: buildData,
      collection: false,
      kind: 'rows',
      scope: named,
    }),
  ),
  ...prefixes.map(
    (p): Endpoint => ({
      pattern: `${p}/i:name/value`,
      resource: buildData,
      collection: false,
      kind: 'build-data-value',
      scope: named,
    }),
  ),
];
