// Docker cannot build here, so the image is checked the way it can be: every path it copies
// from the repository exists, every stage it copies from is defined, it runs as a non-root
// user, and each command of its entrypoint points at a program the build produces.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dockerfile = readFileSync('deploy/Dockerfile', 'utf8');
const lines = dockerfile.split('\n').map((l) => l.trim());

describe('deploy/Dockerfile', () => {
  it('copies only paths that exist', () => {
    const copies = lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from='));
    expect(copies.length).toBeGreaterThan(3);
    for (const line of copies) {
      const parts = line.replace(/^COPY\s+(--\S+\s+)*/, '').split(/\s+/);
      for (const src of parts.slice(0, -1)) expect(existsSync(src), `${line}: ${src}`).toBe(true);
    }
  });

  it('copies from stages it defines', () => {
    const stages = new Set([...dockerfile.matchAll(/^FROM \S+ AS (\S+)/gm)].map((m) => m[1]));
    const used = [...dockerfile.matchAll(/--from=(\S+)/g)].map((m) => m[1]);
    expect(used.length).toBeGreaterThan(0);
    for (const s of used) expect(stages.has(s)).toBe(true);
  });

  it('runs as a non-root user', () => {
    const users = lines.filter((l) => l.startsWith('USER '));
    expect(users.at(-1)).toMatch(/^USER [1-9]\d*/);
  });

  it('starts each process from a compiled entry point the build produces', () => {
    const entry = readFileSync('deploy/docker-entrypoint.sh', 'utf8');
    const targets = [...entry.matchAll(/node \/app\/dist\/(\S+)\.js/g)].map((m) => m[1]!);
    expect(targets.sort()).toEqual([
      'services/api/main',
      'services/core/db/migrate-cli',
      'services/master/main',
      'services/worker/main',
    ]);
    for (const t of targets) expect(existsSync(`${t}.ts`), t).toBe(true);
    const build = JSON.parse(readFileSync('tsconfig.build.json', 'utf8'));
    expect(build.include).toContain('services/**/*.ts');
  });
});
