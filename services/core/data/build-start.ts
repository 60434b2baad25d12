// What a build's start reads to make its first properties (master/builds/properties.ts), in
// one statement: its build set's properties, its builder's project, its main source stamp and
// its changes' authors were four round trips in the transaction of the build's row, each
// holding the builder's lock and a pooled connection a little longer. Each part is the
// statement its own file defines (buildsets.ts, projects.ts, changes.ts, properties.ts), the
// same one the reporters' reads of a build set run alone.
import { one, type Queryable, sql } from '../db/pool.js';
import { buildsetMainSourceStampQuery } from './buildsets.js';
import { buildsetChangeAuthorsQuery } from './changes.js';
import { buildProjectQuery } from './projects.js';
import { buildsetPropertiesOf, buildsetPropertiesQuery, type SourcedProperties } from './properties.js';

export interface BuildStartFacts {
  buildsetProperties: SourcedProperties;
  project: { id: number; name: string } | null;
  sourcestamp: {
    branch: string | null;
    revision: string | null;
    repository: string;
    project: string;
    codebase: string;
  } | null;
  authors: string[];
}

/** The facts of build `buildid` (whose row this transaction may have just written) of build set `bsid`. */
export async function buildStartFacts(q: Queryable, buildid: number, bsid: number): Promise<BuildStartFacts> {
  const row = await one<{
    props: { property_name: string; pair: unknown }[];
    project: BuildStartFacts['project'];
    ss: BuildStartFacts['sourcestamp'];
    authors: string[];
  }>(
    q,
    sql`SELECT
      (SELECT coalesce(json_agg(x), '[]'::json) FROM (${buildsetPropertiesQuery(bsid)}) x) AS props,
      (SELECT row_to_json(x) FROM (${buildProjectQuery(buildid)}) x) AS project,
      (SELECT row_to_json(x) FROM (${buildsetMainSourceStampQuery(bsid)}) x) AS ss,
      ARRAY(${buildsetChangeAuthorsQuery(bsid)}) AS authors`,
  );
  return {
    buildsetProperties: buildsetPropertiesOf(row.props),
    project: row.project,
    sourcestamp: row.ss,
    authors: row.authors,
  };
}
