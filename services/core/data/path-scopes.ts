// The predicates by which paths of the REST API choose their rows through other tables: each
// a condition on the row under the alias `a`, which the API's registry
// (services/api/registry/resources/) gives its query engine as an endpoint's scope. They join
// tables, so they live here with the other statements, one function per path's choice (the
// changes of a build are in changes-of-build.ts).
import { type SQLQuery, sql } from '../db/pool.js';

/** A builder (`a`) a worker is configured for, on any master (Buildbot 4.3's `/workers/{id}/builders`). */
export const builderOfWorker = (workerid: unknown): SQLQuery =>
  sql`EXISTS (SELECT 1 FROM builder_masters bm JOIN configured_workers cw ON cw.buildermasterid = bm.id
    WHERE bm.builderid = a.id AND cw.workerid = ${workerid})`;

/** A worker (`a`) configured on the master and the builder, each when given (`masters/{id}/workers`...). */
export const workerConfiguredOn = (masterid: unknown, builderid: unknown): SQLQuery =>
  sql`EXISTS (SELECT 1 FROM configured_workers cw
    JOIN builder_masters bm ON bm.id = cw.buildermasterid
    WHERE cw.workerid = a.id
      AND (${masterid ?? null}::int IS NULL OR bm.masterid = ${masterid ?? null}::int)
      AND (${builderid ?? null}::int IS NULL OR bm.builderid = ${builderid ?? null}::int))`;

/** A build (`a`) of a change: of a request of a build set holding the change's source stamp. */
export const buildOfChange = (changeid: unknown): SQLQuery =>
  sql`a.buildrequestid IN (SELECT br.id FROM changes c
          JOIN buildset_sourcestamps bss ON bss.sourcestampid = c.sourcestampid
          JOIN buildrequests br ON br.buildsetid = bss.buildsetid
          WHERE c.changeid = ${changeid})`;

/** A build (`a`) of the build sets a build triggered (their parent_buildid, Buildbot 4.3). */
export const buildTriggeredBy = (buildid: unknown): SQLQuery =>
  sql`a.buildrequestid IN (SELECT br.id FROM buildrequests br
          JOIN buildsets bs ON bs.id = br.buildsetid WHERE bs.parent_buildid = ${buildid})`;
