// Collections that live in the configuration or the registry rather than in tables: root
// links, the API description, force schedulers. They go through the same query engine as
// everything else, as a JSON array that PostgreSQL unnests, so filters and ordering behave
// exactly alike everywhere.
import { type SQLQuery, sql } from '../../../core/db/pool.js';
import { type Field, field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, Resource } from '../model.js';

function jsonList(items: readonly object[]): SQLQuery {
  return sql`json_array_elements(${JSON.stringify(items)}::json) WITH ORDINALITY AS a(doc, ord)`;
}
const text = (key: string) => sql`(a.doc ->> ${key}::text)`;
const json = (key: string) => sql`(a.doc -> ${key}::text)`;

export function rootLinkResource(names: readonly string[]): Resource {
  return {
    name: 'rootlink',
    plural: 'rootlinks',
    key: 'name',
    from: jsonList(names.map((name) => ({ name }))),
    naturalOrder: sql`a.ord`,
    fields: [field('name', t.string, text('name'))],
  };
}

export const specFields: readonly Field[] = [
  field('path', t.string, text('path')),
  field('type', t.string, text('type')),
  field('plural', t.string, text('plural')),
  field('type_spec', t.jsonobject, json('type_spec')),
];

export function specResource(entries: readonly object[]): Resource {
  return {
    name: 'spec',
    plural: 'specs',
    key: 'path',
    from: jsonList(entries),
    naturalOrder: sql`a.ord`,
    fields: specFields,
  };
}

export function forceSchedulerResource(schedulers: readonly object[]): Resource {
  return {
    name: 'forcescheduler',
    plural: 'forceschedulers',
    key: 'name',
    from: jsonList(schedulers),
    fields: [
      field('name', t.identifier(50), text('name')),
      field('button_name', t.string, text('button_name')),
      field('label', t.string, text('label')),
      field(
        'builder_names',
        t.list(t.identifier(50)),
        sql`ARRAY(SELECT json_array_elements_text(a.doc -> 'builder_names'))`,
      ),
      field('enabled', t.boolean, sql`(a.doc ->> 'enabled')::boolean`),
      field('all_fields', t.list(t.jsonobject), json('all_fields')),
    ],
  };
}

export function forceSchedulerEndpoints(resource: Resource): Endpoint[] {
  return [
    {
      pattern: 'forceschedulers/i:schedulername',
      resource,
      collection: false,
      kind: 'rows',
      scope: (a) => [sql`${text('name')} = ${a.schedulername}`],
      actions: ['force'],
    },
    {
      pattern: 'forceschedulers',
      resource,
      collection: true,
      kind: 'rows',
      scope: () => [],
      rootLink: 'forceschedulers',
    },
    {
      pattern: 'builders/:builderid/forceschedulers',
      resource,
      collection: true,
      kind: 'rows',
      scope: (a) => [
        sql`EXISTS (SELECT 1 FROM builders b WHERE (b.id::text = ${String(a.builderid)} OR b.name = ${String(a.builderid)})
              AND b.name IN (SELECT json_array_elements_text(a.doc -> 'builder_names')))`,
      ],
    },
  ];
}
