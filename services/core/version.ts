// Flotilla's release version: package.json's, found by walking up from this file, since the
// same code runs from services/core (npm start, tsx), from a test's transpiled copy under
// .data/, and from the image's dist/services/core (the image copies package.json to /app).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The version of the nearest package.json named `flotilla` above this file; 'unknown' if none. */
export function flotillaVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'flotilla' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      // no package.json here (or not readable): one folder up
    }
    if (dirname(dir) === dir) break;
  }
  return cached;
}
