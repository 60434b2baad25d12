// Properties: the sourcedproperties object of a build or a build set, and the list form
// (`property_list`, `properties_list`) with one entry per property.
import { sql } from '../../../core/db/pool.js';
import { buildPropertiesJson } from '../../../core/entities/build.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, Resource } from '../model.js';
import { buildIdOf } from './builds.js';

const sourced = { type: 'sourcedproperties', type_spec: { name: 'sourcedproperties' } };

const buildProperties: Resource = {
  name: 'property',
  plural: 'properties',
  key: 'name',
  from: sql`builds a`,
  fields: [],
  specType: sourced,
};
const buildsetProperties: Resource = { ...buildProperties, from: sql`buildsets a` };

const listFields = (
  name: ReturnType<typeof sql>,
  source: ReturnType<typeof sql>,
  value: ReturnType<typeof sql>,
) => [field('name', t.string, name), field('source', t.string, source), field('value', t.jsonobject, value)];
const listSpec = {
  type: '_property',
  type_spec: {
    fields: [
      { name: 'name', type: 'string', type_spec: { name: 'string' } },
      { name: 'source', type: 'string', type_spec: { name: 'string' } },
      { name: 'value', type: 'jsonobject', type_spec: { name: 'jsonobject' } },
    ],
    type: '_property',
  },
};
const pairValue = (col: ReturnType<typeof sql>) => sql`((flotilla.try_json(${col}) -> 0)::text)`;
const pairSource = (col: ReturnType<typeof sql>) => sql`(flotilla.try_json(${col}) ->> 1)`;

const buildPropertyList: Resource = {
  name: '_property',
  plural: '_properties',
  key: 'name',
  from: sql`build_properties a`,
  fields: listFields(sql`a.name::text`, sql`a.source::text`, sql`a.value`),
  specType: listSpec,
};
const buildsetPropertyList: Resource = {
  ...buildPropertyList,
  from: sql`buildset_properties a`,
  fields: listFields(
    sql`a.property_name::text`,
    pairSource(sql`a.property_value`),
    pairValue(sql`a.property_value`),
  ),
};
const changePropertyList: Resource = {
  ...buildPropertyList,
  from: sql`change_properties a`,
  fields: listFields(
    sql`a.property_name::text`,
    pairSource(sql`a.property_value`),
    pairValue(sql`a.property_value`),
  ),
};

export const propertyEndpoints: Endpoint[] = [
  {
    pattern: 'builds/n:buildid/property_list',
    resource: buildPropertyList,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.buildid = ${a.buildid}`],
  },
  {
    pattern: 'buildsets/n:bsid/properties_list',
    resource: buildsetPropertyList,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.buildsetid = ${a.bsid}`],
  },
  {
    pattern: 'changes/n:changeid/properties_list',
    resource: changePropertyList,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.changeid = ${a.changeid}`],
  },
  {
    pattern: 'buildsets/n:bsid/properties',
    resource: buildsetProperties,
    collection: false,
    kind: 'properties',
    scope: (a) => [sql`a.id = ${a.bsid}`],
    value: () => sql`(SELECT json_object_agg(bp.property_name, flotilla.try_json(bp.property_value))
      FROM buildset_properties bp WHERE bp.buildsetid = a.id)`,
  },
  {
    pattern: 'builders/n:builderid/builds/n:build_number/properties',
    resource: buildProperties,
    collection: false,
    kind: 'properties',
    scope: (a) => [sql`a.id = ${buildIdOf(a)}`],
    value: () => buildPropertiesJson(sql`a.id`, null),
  },
  {
    pattern: 'builds/n:buildid/properties',
    resource: buildProperties,
    collection: false,
    kind: 'properties',
    scope: (a) => [sql`a.id = ${a.buildid}`],
    value: () => buildPropertiesJson(sql`a.id`, null),
    parts: (a) => ({
      builds: { id: a.buildid },
      build_properties: { buildid: a.buildid },
    }),
  },
];
