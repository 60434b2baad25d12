// The registry: every endpoint of the API, in Buildbot's registration order (which decides
// which pattern a path matches, and the order of root links), and the /application.spec
// generated from it.
import type { Endpoint, Resource } from './model.js';
import { PathMatcher } from './paths.js';
import { artifactEndpoints } from './resources/artifacts.js';
import { auditEndpoints } from './resources/audit.js';
import { buildDataEndpoints } from './resources/build-data.js';
import { builderEndpoints } from './resources/builders.js';
import { buildrequestEndpoints } from './resources/buildrequests.js';
import { buildEndpoints } from './resources/builds.js';
import { buildsetEndpoints } from './resources/buildsets.js';
import { changeBuildEndpoints } from './resources/change-builds.js';
import { changeEndpoints } from './resources/changes.js';
import { changesourceEndpoints } from './resources/changesources.js';
import { branchEndpoints, codebaseEndpoints, commitEndpoints } from './resources/codebases.js';
import { logchunkEndpoints } from './resources/logchunks.js';
import { logEndpoints } from './resources/logs.js';
import { masterEndpoints } from './resources/masters.js';
import { projectEndpoints } from './resources/projects.js';
import { propertyEndpoints } from './resources/properties.js';
import { schedulerEndpoints } from './resources/schedulers.js';
import { sourcestampEndpoints } from './resources/sourcestamps.js';
import {
  forceSchedulerEndpoints,
  forceSchedulerResource,
  rootLinkResource,
  specResource,
} from './resources/static-lists.js';
import { stepEndpoints } from './resources/steps.js';
import { testResultEndpoints, testResultSetEndpoints } from './resources/test-results.js';
import { workerEndpoints } from './resources/workers.js';
import { fieldSpec } from './types.js';

export interface Registry {
  endpoints: readonly Endpoint[];
  matcher: PathMatcher;
}

function entitySpec(r: Resource): { type: string; type_spec: Record<string, unknown> } {
  return r.specType ?? { type: r.name, type_spec: { fields: r.fields.map(fieldSpec), type: r.name } };
}

/** Python sorts the pattern tuples; compare element by element, by code point. */
function byPathTuple(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  }
  return x.length - y.length;
}

export function buildRegistry(forceSchedulers: readonly object[]): Registry {
  const force = forceSchedulerEndpoints(forceSchedulerResource(forceSchedulers));
  const body: Endpoint[] = [
    ...buildDataEndpoints,
    ...builderEndpoints,
    ...buildEndpoints,
    ...buildrequestEndpoints,
    ...workerEndpoints,
    ...stepEndpoints,
    ...logEndpoints,
    ...logchunkEndpoints,
    ...buildsetEndpoints,
    ...changeEndpoints,
    ...changesourceEndpoints,
    ...masterEndpoints,
    ...sourcestampEndpoints,
    ...schedulerEndpoints,
    ...force,
  ];
  const tail: Endpoint[] = [
    ...projectEndpoints,
    ...propertyEndpoints,
    ...testResultEndpoints,
    ...testResultSetEndpoints,
    ...codebaseEndpoints,
    ...commitEndpoints,
    ...branchEndpoints,
    ...artifactEndpoints,
    ...auditEndpoints,
    ...changeBuildEndpoints,
  ];
  const rootLinks = [...body, ...tail].flatMap((e) => (e.rootLink ? [e.rootLink] : []));
  const root: Endpoint = {
    pattern: '',
    resource: rootLinkResource(rootLinks),
    collection: true,
    kind: 'rows',
    scope: () => [],
  };
  // The spec lists itself too, so it is built in two steps.
  const specEntry = (e: Endpoint) => ({
    path: e.pattern,
    plural: e.resource.plural,
    ...entitySpec(e.resource),
  });
  const specStub: Endpoint = {
    pattern: 'application.spec',
    resource: specResource([]),
    collection: true,
    kind: 'rows',
    scope: () => [],
  };
  const listed = [...body, root, specStub, ...tail].filter((e) => !e.unlisted);
  const entries = listed.map(specEntry).sort((p, q) => byPathTuple(p.path, q.path));
  const spec: Endpoint = { ...specStub, resource: specResource(entries) };
  const endpoints = [...body, root, spec, ...tail];
  return { endpoints, matcher: new PathMatcher(endpoints) };
}
