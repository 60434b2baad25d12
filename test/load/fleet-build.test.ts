// The fleet benchmark runs the services as the image does, from its bundles without source
// maps (load/fleet/run.ts, deploy/bundle.ts), while the suite's own build keeps them for its
// stack traces: each build's processes are started the way its files want.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildServices, SERVICES_BUILD_ENV, serviceCommand } from '../helpers/service-build.js';

const MAIN = 'services/master/main.ts';
const suiteBuild = process.env[SERVICES_BUILD_ENV];

function commandIn(build: string): string[] {
  const before = process.env[SERVICES_BUILD_ENV];
  process.env[SERVICES_BUILD_ENV] = build;
  try {
    return serviceCommand(MAIN);
  } finally {
    if (before === undefined) delete process.env[SERVICES_BUILD_ENV];
    else process.env[SERVICES_BUILD_ENV] = before;
  }
}

describe('the services built for a benchmark', () => {
  let bare: string | undefined;
  afterAll(() => {
    if (bare) rmSync(bare, { recursive: true, force: true });
  });

  it("are the image's bundles, with no source maps, started without --enable-source-maps", async () => {
    bare = await buildServices({ bundled: true });
    const command = commandIn(bare);
    expect(command).toEqual([join(bare, 'services/master/main.js')]);
    expect(readFileSync(command[0]!, 'utf8')).not.toContain('sourceMappingURL');
    // One of deploy/bundle.ts's: the service in a chunk of its own. Its migrations beside it.
    expect(readFileSync(command[0]!, 'utf8')).toMatch(/import\("\.\.\/chunks\/service-/);
    expect(existsSync(join(bare, 'services/core/db/migrations/0001_buildbot_3_7_schema.sql'))).toBe(true);
  });

  it("the suite's build keeps its maps and the flag that reads them", () => {
    expect(suiteBuild).toBeTruthy();
    const command = commandIn(suiteBuild!);
    expect(command[0]).toBe('--enable-source-maps');
    expect(readFileSync(command[1]!, 'utf8')).toContain('sourceMappingURL=data:');
  });
});
