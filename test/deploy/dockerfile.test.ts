// Docker cannot build here, so the images are checked the way they can be: statically here
// (paths, stages, pins, users, ports, packages, build context), and by running the layout
// they produce in image-layout.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTRY_POINTS } from '../../deploy/bundle.js';
import {
  aptPackages,
  copies,
  effective,
  lineage,
  readDockerfile,
  stageEnv,
  stagesNeeded,
} from './dockerfile.js';

const df = readDockerfile();
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const TARGETS = ['server', 'worker'] as const;

describe('deploy/Dockerfile', () => {
  it('builds the server image by default and a worker image as a target', () => {
    expect(df.stages.at(-1)!.name).toBe('server');
    expect(df.stages.map((s) => s.name)).toContain('worker');
  });

  it('starts every stage from one base image, pinned by digest, of the Node the scripts run on', () => {
    const image = df.args.NODE_IMAGE!;
    expect(image).toMatch(/^node:[\d.]+-bookworm-slim@sha256:[0-9a-f]{64}$/);
    expect(image.split(':')[1]!.split('-')[0]).toBe(pkg.devDependencies.node);
    const names = new Set(df.stages.map((s) => s.name));
    for (const s of df.stages) expect(s.from === image || names.has(s.from), s.name).toBe(true);
  });

  it('copies only paths that exist, from stages it defines', () => {
    const names = new Set(df.stages.map((s) => s.name));
    let n = 0;
    for (const s of df.stages) {
      for (const c of copies(s)) {
        n++;
        if (c.from) expect(names.has(c.from), `${s.name}: --from=${c.from}`).toBe(true);
        else for (const src of c.sources) expect(existsSync(src), `${s.name}: ${src}`).toBe(true);
      }
    }
    expect(n).toBeGreaterThan(8);
  });

  it('runs each image as a non-root user, under tini, with a health check of its probes', () => {
    for (const t of TARGETS) {
      expect(effective(df, t, 'USER').at(-1), t).toMatch(/^[1-9]\d*:[1-9]\d*$/);
      expect(effective(df, t, 'ENTRYPOINT').at(-1), t).toBe(
        '["/usr/bin/tini", "--", "/usr/local/bin/flotilla"]',
      );
      expect(effective(df, t, 'HEALTHCHECK').at(-1), t).toMatch(
        /CMD \["\/usr\/local\/bin\/flotilla", "healthcheck"\]$/,
      );
    }
    expect(effective(df, 'server', 'CMD').at(-1)).toBe('["api"]');
    expect(effective(df, 'worker', 'CMD').at(-1)).toBe('["worker"]');
  });

  it('sets every port it listens on and exposes each', () => {
    const exposed = (t: string) => effective(df, t, 'EXPOSE').flatMap((e) => e.split(/\s+/));
    const server = stageEnv(df, 'server');
    expect(server).toMatchObject({ PORT: '8080', PROBE_PORT: '8011', WORKER_PORT: '9989', HOST: '0.0.0.0' });
    expect(exposed('server').sort()).toEqual([server.PORT, server.PROBE_PORT, server.WORKER_PORT].sort());
    const worker = stageEnv(df, 'worker');
    expect(worker.PORT).toBeUndefined();
    expect(exposed('worker')).toEqual([worker.PROBE_PORT]);
  });

  it('installs what git needs to clone over https and ssh, and the worker build tools', () => {
    for (const t of TARGETS) {
      expect(aptPackages(df, t), t).toEqual(
        expect.arrayContaining(['git', 'ca-certificates', 'openssh-client', 'tini']),
      );
    }
    expect(aptPackages(df, 'worker')).toEqual(expect.arrayContaining(['build-essential', 'python3']));
    // The runtime images stay free of compilers: only the worker, which runs builds, has them.
    expect(aptPackages(df, 'server')).not.toContain('build-essential');
    for (const s of stagesNeeded(df, 'server'))
      expect(aptPackages(df, s), s).not.toContain('build-essential');
  });

  it('puts no API or master code, and no migrations, in the worker image', () => {
    const sources = lineage(df, 'worker').flatMap((s) => copies(s).flatMap((c) => c.sources));
    expect(sources).toContain('/src/dist/services/worker');
    for (const src of sources)
      expect(src).not.toMatch(/services(\/?$|\/api|\/master|\/core\/db\/migrations)/);
  });

  it('installs from the lock: npm ci, production packages only in the images, no install scripts', () => {
    const runs = df.stages.flatMap((s) =>
      s.instructions.filter((i) => i.op === 'RUN' && /\bnpm\b/.test(i.args)),
    );
    expect(runs.length).toBeGreaterThan(0);
    for (const r of runs) {
      expect(r.args).toMatch(/^npm ci /);
      expect(r.args).toContain('--ignore-scripts');
    }
    expect(df.stage('deps').instructions.find((i) => i.op === 'RUN')!.args).toContain('--omit=dev');
  });
});

describe('the build context (.dockerignore)', () => {
  const rules = readFileSync('.dockerignore', 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  // Docker's rule: the last matching line wins. The file only uses `*`, `!path`, `!dir/` and `**/*.x`.
  const matches = (rule: string, path: string) => {
    const r = rule.replace(/^!/, '').replace(/\/$/, '');
    if (r === '*') return true;
    if (r.startsWith('**/*')) return path.endsWith(r.slice(4));
    return path === r || path.startsWith(`${r}/`);
  };
  const included = (path: string) => {
    let inc = true;
    for (const rule of rules) if (matches(rule, path)) inc = rule.startsWith('!');
    return inc;
  };

  it('holds every file the Dockerfile copies from the repository', () => {
    for (const s of df.stages)
      for (const c of copies(s).filter((x) => !x.from))
        for (const src of c.sources) expect(included(src), src).toBe(true);
  });

  it('leaves out local state, installed packages, tests and git history', () => {
    for (const p of [
      '.data/local/worker-password',
      'node_modules/x',
      '.git/HEAD',
      '.tools/bin/helm',
      'test/x.test.ts',
      'load/run.ts',
      'services/core/x.test.ts',
      'dist/x.js',
    ]) {
      expect(included(p), p).toBe(false);
    }
    expect(included('services/api/main.ts')).toBe(true);
  });
});

describe('deploy/docker-entrypoint.sh', () => {
  it('starts each process from a compiled entry point the build produces', () => {
    const entry = readFileSync('deploy/docker-entrypoint.sh', 'utf8');
    const targets = [...entry.matchAll(/node "\$app\/dist\/(\S+)\.js"/g)].map((m) => m[1]!);
    expect(targets.sort()).toEqual([
      'services/api/auth-cli',
      'services/api/main',
      'services/core/db/migrate-cli',
      'services/master/main',
      'services/worker/main',
    ]);
    for (const t of targets) expect(existsSync(`${t}.ts`), t).toBe(true);
    // ...each one of deploy/bundle.ts's entry points, which the build stage bundles.
    expect([...ENTRY_POINTS].map((e) => e.replace(/\.ts$/, '')).sort()).toEqual(targets.sort());
  });
});
