// The build dictionary a report is made from (Buildbot's getDetailsForBuild and, for a request
// not yet built, BuildRequestGenerator.partial_build_dict), read when the job runs:
// - a build event: the build as the event carried it, with its builder, request, build set
//   (source stamps), parent build, properties, url, and as the generators need them its steps
//   (with their logs' urls) and the builder's previous build;
// - a request event: what is known before a build starts (the build set's and the builder's
//   properties, buildername, the source stamp's branch, revision...), results null.
// Links are the web UI's (`#/builders/1/builds/2`); a request links to its builder's page,
// which lists pending requests (the UI has no page of its own for one).
import type { MasterConfig } from '../../core/config/master-config.js';
import {
  buildsetMainSourceStamp,
  getBuildProperties,
  getBuildsetProperties,
  reportBlamelist,
  reportParent,
  reportPreviousBuild,
  reportRequestContext,
  reportSteps,
} from '../../core/data/index.js';
import type { Queryable } from '../../core/db/pool.js';
import type { ReportJob } from './events.js';
import type { Needs } from './generators.js';
import type { BuildDict, Properties } from './report.js';

export interface Details {
  build: BuildDict;
  /** The blamelist (empty for a request). */
  users: string[];
}

export const buildUrl = (base: string, builderid: number, number: number): string =>
  `${base}#/builders/${builderid}/builds/${number}`;

/** The properties a request's build will start with, as far as they are known now. */
async function requestProperties(
  q: Queryable,
  config: MasterConfig,
  bsid: number,
  builderName: string,
): Promise<Properties> {
  const props: Record<string, readonly [unknown, string]> = { ...(await getBuildsetProperties(q, bsid)) };
  const builder = config.builders.find((b) => b.name === builderName);
  for (const [k, v] of Object.entries(builder?.properties ?? {})) props[k] = [v, 'Builder'];
  props.buildername = [builderName, 'Builder'];
  props.buildnumber = [null, 'Build'];
  const ss = await buildsetMainSourceStamp(q, bsid);
  if (ss) {
    for (const k of ['branch', 'revision', 'repository', 'codebase', 'project'] as const)
      props[k] = [ss[k], 'Build'];
  }
  return props;
}

/** The job's build dictionary; null when its request or build no longer exists. */
export async function loadDetails(
  q: Queryable,
  config: MasterConfig,
  buildbotURL: string,
  job: ReportJob,
  needs: Needs,
): Promise<Details | null> {
  const ctx = await reportRequestContext(q, job.buildrequestid);
  if (!ctx) return null;
  const builder = ctx.builder as BuildDict['builder'];
  const buildset = ctx.buildset as BuildDict['buildset'];
  if (!job.build) {
    const build: BuildDict = {
      properties: await requestProperties(q, config, buildset.bsid, builder.name),
      buildrequest: ctx.buildrequest,
      buildset,
      builderid: builder.builderid,
      builder,
      url: `${buildbotURL}#/builders/${builder.builderid}`,
      results: null,
      complete: false,
    };
    return { build, users: [] };
  }
  const snapshot = job.build as Record<string, unknown> & {
    buildid: number;
    number: number;
    builderid: number;
  };
  const [own, known, parent] = await Promise.all([
    getBuildProperties(q, snapshot.buildid),
    requestProperties(q, config, buildset.bsid, builder.name),
    reportParent(q, buildset),
  ]);
  // A build just started may not have its properties stored yet (they follow its row): what
  // the request already says fills in, so `buildbot/%(prop:buildername)s` never loses its name.
  const properties: Properties = { ...known, buildnumber: [snapshot.number, 'Build'], ...own };
  const url = buildUrl(buildbotURL, snapshot.builderid, snapshot.number);
  const build: BuildDict = {
    ...snapshot,
    complete: Boolean(snapshot.complete),
    results: (snapshot.results as number | null) ?? null,
    buildrequest: ctx.buildrequest,
    buildset,
    ...parent,
    builder,
    url,
    properties,
  };
  if (needs.steps) {
    const steps = await reportSteps(q, snapshot.buildid, needs.logs);
    build.steps = steps.map((s) =>
      s.logs
        ? {
            ...s,
            logs: (s.logs as Record<string, unknown>[]).map((l) => ({
              ...l,
              url: `${url}/steps/${s.number}/logs/${l.slug}`,
            })),
          }
        : s,
    );
  }
  if (needs.previousBuild)
    build.prev_build = (await reportPreviousBuild(
      q,
      snapshot.builderid,
      snapshot.number,
    )) as BuildDict['prev_build'];
  return { build, users: await reportBlamelist(q, buildset.bsid, properties) };
}
