import { sql } from '../../../core/db/pool.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, Resource } from '../model.js';
import { builderIdOf } from './builders.js';

export const testResult: Resource = {
  name: 'test_result',
  plural: 'test_results',
  key: 'test_resultid',
  from: sql`test_results a`,
  fields: [
    field('test_resultid', t.integer, sql`a.id`),
    field('builderid', t.integer, sql`a.builderid`),
    field('test_result_setid', t.integer, sql`a.test_result_setid`),
    field('test_name', t.string, sql`(SELECT tn.name FROM test_names tn WHERE tn.id = a.test_nameid)`, {
      nullable: true,
    }),
    field(
      'test_code_path',
      t.string,
      sql`(SELECT tp.path FROM test_code_paths tp WHERE tp.id = a.test_code_pathid)`,
      {
        nullable: true,
      },
    ),
    field('line', t.integer, sql`a.line`, { nullable: true }),
    field('duration_ns', t.integer, sql`a.duration_ns`, { nullable: true }),
    field('value', t.string, sql`a.value`),
  ],
};

export const testResultSet: Resource = {
  name: 'test_result_set',
  plural: 'test_result_sets',
  key: 'test_result_setid',
  from: sql`test_result_sets a`,
  fields: [
    field('test_result_setid', t.integer, sql`a.id`),
    field('builderid', t.integer, sql`a.builderid`),
    field('buildid', t.integer, sql`a.buildid`),
    field('stepid', t.integer, sql`a.stepid`),
    field('description', t.string, sql`a.description`, { nullable: true }),
    field('category', t.string, sql`a.category`),
    field('value_unit', t.string, sql`a.value_unit`),
    field('tests_passed', t.integer, sql`a.tests_passed`, { nullable: true }),
    field('tests_failed', t.integer, sql`a.tests_failed`, { nullable: true }),
    field('complete', t.boolean, sql`(a.complete <> 0)`),
  ],
};

export const testResultEndpoints: Endpoint[] = [
  {
    pattern: 'test_result_sets/n:test_result_setid/results',
    resource: testResult,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.test_result_setid = ${a.test_result_setid}`],
  },
];

export const testResultSetEndpoints: Endpoint[] = [
  {
    pattern: 'builders/n:builderid/test_result_sets',
    resource: testResultSet,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.builderid = ${a.builderid}`],
  },
  {
    pattern: 'builders/s:buildername/test_result_sets',
    resource: testResultSet,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.builderid = ${builderIdOf(a)}`],
  },
  {
    pattern: 'builds/n:buildid/test_result_sets',
    resource: testResultSet,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.buildid = ${a.buildid}`],
  },
  {
    pattern: 'steps/n:stepid/test_result_sets',
    resource: testResultSet,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.stepid = ${a.stepid}`],
  },
  // Buildbot 4.3: every set.
  {
    pattern: 'test_result_sets',
    resource: testResultSet,
    collection: true,
    kind: 'rows',
    scope: () => [],
  },
  {
    pattern: 'test_result_sets/n:test_result_setid',
    resource: testResultSet,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.test_result_setid}`],
  },
];
