// The statement the API runs for a GET of `url` (a path under /api/v2 with its query string),
// compiled as the read path compiles it, so that a test can run it or ask for its plan.
import { compileRows } from '../../../services/api/query/compile.js';
import { groupArgs, parseResultSpec } from '../../../services/api/query/parse.js';
import { parentExists } from '../../../services/api/query/run.js';
import { buildRegistry, type Registry } from '../../../services/api/registry/index.js';

export function compiled(url: string, registry: Registry = buildRegistry([])) {
  const [path = '', qs = ''] = url.split('?');
  const segments = path.split('/').filter(Boolean);
  const match = registry.matcher.match(segments);
  if (!match) throw new Error(`no endpoint for ${url}`);
  const { endpoint, args } = match;
  const spec = parseResultSpec(groupArgs(qs), endpoint.resource.fields, endpoint.collection);
  const parent = endpoint.collection ? parentExists(registry, segments) : null;
  return compileRows({ endpoint, args, spec, parentExists: parent }, endpoint.resource.fields);
}
