// What a fresh process loads when it imports the master's code (services/master/service.ts, from
// the suite's build when there is one): `before` runs ahead of the import (a resolve hook, say),
// `after` once it is done and prints one JSON value, which is returned.
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SERVICES_BUILD_ENV } from './service-build.js';

export function afterMasterImport<T>(before: string, after: string): T {
  const root = resolve(import.meta.dirname, '../..');
  const built = process.env[SERVICES_BUILD_ENV];
  const service = pathToFileURL(
    built ? join(built, 'services/master/service.js') : join(root, 'services/master/service.ts'),
  ).href;
  const script = `${before}\nawait import(${JSON.stringify(service)});\n${after}`;
  return JSON.parse(
    execFileSync(
      process.execPath,
      [...(built ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script],
      {
        cwd: root,
        encoding: 'utf8',
      },
    ),
  ) as T;
}
