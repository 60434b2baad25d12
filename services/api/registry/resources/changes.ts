import { sourcestampJson } from '../../../core/data/entities.js';
import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type Resource } from '../model.js';
import { t } from '../types.js';
import { buildIdOf } from './builds.js';
import { sourcestampType } from './common.js';

// Buildbot stores change properties as [value, "Change"]; a value stored any other way is
// taken whole, with "Change" as its source.
const changeProperty = sql`CASE
    WHEN json_typeof(flotilla.try_json(cp.property_value)) = 'array'
     AND json_array_length(flotilla.try_json(cp.property_value)) = 2
     AND json_typeof(flotilla.try_json(cp.property_value) -> 1) = 'string'
     AND flotilla.try_json(cp.property_value) ->> 1 = 'Change'
    THEN flotilla.try_json(cp.property_value)
    ELSE json_build_array(flotilla.try_json(cp.property_value), 'Change') END`;

export const change: Resource = {
  name: 'change',
  plural: 'changes',
  key: 'changeid',
  from: sql`changes a`,
  counted: { table: 'changes', dims: [], scopes: [[]] },
  // Buildbot answers /changes newest first.
  defaultOrder: ['-changeid'],
  fields: [
    field('changeid', t.integer, sql`a.changeid`, { sqlNullSemantics: true }),
    field(
      'parent_changeids',
      t.list(t.integer),
      sql`(CASE WHEN a.parent_changeids IS NULL OR a.parent_changeids = 0 THEN ARRAY[]::int[] ELSE ARRAY[a.parent_changeids] END)`,
    ),
    field('author', t.string, sql`a.author`),
    field('committer', t.string, sql`a.committer`, { nullableSql: true }),
    field(
      'files',
      t.list(t.string),
      sql`ARRAY(SELECT cf.filename::text FROM change_files cf WHERE cf.changeid = a.changeid ORDER BY cf.ctid)`,
    ),
    field('comments', t.string, sql`a.comments`),
    field('revision', t.string, sql`a.revision`, { nullable: true }),
    field('when_timestamp', t.integer, sql`a.when_timestamp`),
    field('branch', t.string, sql`a.branch`, { nullable: true }),
    field('category', t.string, sql`a.category`, { nullable: true }),
    field('revlink', t.string, sql`a.revlink`, { nullable: true }),
    field(
      'properties',
      t.sourcedproperties,
      sql`coalesce((SELECT json_object_agg(cp.property_name, ${changeProperty}) FROM change_properties cp
           WHERE cp.changeid = a.changeid AND flotilla.try_json(cp.property_value) IS NOT NULL), '{}'::json)`,
    ),
    field('repository', t.string, sql`a.repository`),
    field('project', t.string, sql`a.project`),
    field('codebase', t.string, sql`a.codebase`),
    field(
      'sourcestamp',
      sourcestampType,
      sql`(SELECT ${sourcestampJson('ss')} FROM sourcestamps ss WHERE ss.id = a.sourcestampid)`,
    ),
  ],
};

// The changes of a build: for each of its source stamps, the newest change of that stamp and
// its ancestors, back to (not including) the change built by the previous successful build of
// the same builder with the same repository, branch and codebase set.
const changesOfBuild = (buildid: ReturnType<typeof sql>) => sql`a.changeid IN (
  WITH RECURSIVE
    cur AS (SELECT b.id, b.builderid, b.number FROM builds b WHERE b.id = ${buildid}),
    stamps AS (
      SELECT ss.id AS ssid, ss.codebase FROM cur
      JOIN buildrequests br ON br.id = (SELECT buildrequestid FROM builds WHERE id = cur.id)
      JOIN buildset_sourcestamps bss ON bss.buildsetid = br.buildsetid
      JOIN sourcestamps ss ON ss.id = bss.sourcestampid),
    stampset AS (
      SELECT array_agg(DISTINCT ss.repository || chr(1) || coalesce(ss.branch, chr(2)) || chr(1) || ss.codebase
                       ORDER BY ss.repository || chr(1) || coalesce(ss.branch, chr(2)) || chr(1) || ss.codebase) AS k
      FROM cur JOIN buildrequests br ON br.id = (SELECT buildrequestid FROM builds WHERE id = cur.id)
      JOIN buildset_sourcestamps bss ON bss.buildsetid = br.buildsetid
      JOIN sourcestamps ss ON ss.id = bss.sourcestampid),
    prev AS (
      SELECT pb.id FROM cur, builds pb
      WHERE pb.builderid = cur.builderid AND pb.number < cur.number AND pb.results = 0
        AND (SELECT array_agg(DISTINCT s2.repository || chr(1) || coalesce(s2.branch, chr(2)) || chr(1) || s2.codebase
                              ORDER BY s2.repository || chr(1) || coalesce(s2.branch, chr(2)) || chr(1) || s2.codebase)
             FROM buildrequests br2 JOIN buildset_sourcestamps bss2 ON bss2.buildsetid = br2.buildsetid
             JOIN sourcestamps s2 ON s2.id = bss2.sourcestampid WHERE br2.id = pb.buildrequestid)
            = (SELECT k FROM stampset)
      ORDER BY pb.complete_at DESC NULLS LAST LIMIT 1),
    stop AS (
      SELECT ss.codebase, (SELECT c.changeid FROM changes c WHERE c.sourcestampid = ss.id ORDER BY c.changeid DESC LIMIT 1) AS changeid
      FROM prev JOIN builds pb ON pb.id = prev.id
      JOIN buildrequests br ON br.id = pb.buildrequestid
      JOIN buildset_sourcestamps bss ON bss.buildsetid = br.buildsetid
      JOIN sourcestamps ss ON ss.id = bss.sourcestampid),
    walk AS (
      SELECT c.changeid, c.parent_changeids, st.codebase, 1 AS depth
      FROM stamps st
      JOIN LATERAL (SELECT * FROM changes c WHERE c.sourcestampid = st.ssid ORDER BY c.changeid DESC LIMIT 1) c ON true
      WHERE c.changeid IS DISTINCT FROM (SELECT changeid FROM stop WHERE stop.codebase = st.codebase LIMIT 1)
      UNION ALL
      SELECT p.changeid, p.parent_changeids, w.codebase, w.depth + 1
      FROM walk w JOIN changes p ON p.changeid = w.parent_changeids
      WHERE w.parent_changeids IS DISTINCT FROM (SELECT changeid FROM stop WHERE stop.codebase = w.codebase LIMIT 1)
        AND w.depth < 10000)
  SELECT changeid FROM walk)`;

export const changeEndpoints: Endpoint[] = [
  {
    pattern: 'changes/n:changeid',
    resource: change,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.changeid = ${a.changeid}`],
  },
  {
    pattern: 'changes',
    resource: change,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'changes',
    countScope: () => ({}),
  },
  {
    pattern: 'builders/n:builderid/builds/n:build_number/changes',
    resource: change,
    collection: true,
    kind: 'rows',
    scope: (a) => [changesOfBuild(buildIdOf(a))],
  },
  {
    pattern: 'builds/n:buildid/changes',
    resource: change,
    collection: true,
    kind: 'rows',
    scope: (a) => [changesOfBuild(buildIdOf(a))],
  },
  {
    pattern: 'sourcestamps/n:ssid/changes',
    resource: change,
    collection: true,
    kind: 'rows',
    // Buildbot answers only the newest change of the stamp.
    scope: (a) => [
      sql`a.changeid = (SELECT c.changeid FROM changes c WHERE c.sourcestampid = ${a.ssid} ORDER BY c.changeid DESC LIMIT 1)`,
    ],
  },
];
