// The configuration `npm start` runs (deploy/local/local-config.ts, the step start.sh takes
// before it starts anything): a copy of deploy/example/master.yaml made once, with the ports
// of that start written in, then kept as the user left it; a start whose ports differ from the
// copy's, or after the example changed, says so and how to get a fresh copy. The example
// itself loads with checkconfig and sets retention short enough to be seen within an hour.
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareLocalConfig } from '../../deploy/local/local-config.js';
import { loadMasterConfig } from '../../services/core/config/master-config.js';
import { builderPlan } from '../../services/master/jobs/retention-plan.js';
import { serviceCommand } from '../helpers/service-build.js';

const EXAMPLE = 'deploy/example/master.yaml';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'local-config-'));
  dirs.push(d);
  return d;
}

/** The step as start.sh runs it: `node deploy/local/local-config.ts ...`, on the project's Node. */
function prepare(data: string, apiPort: string, reportsPort: string, example = EXAMPLE) {
  const r = spawnSync(
    process.execPath,
    ['deploy/local/local-config.ts', example, join(data, 'master.yaml'), data, apiPort, reportsPort],
    { encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  return { stdout: r.stdout, stderr: r.stderr, text: readFileSync(join(data, 'master.yaml'), 'utf8') };
}

describe("npm start's configuration", () => {
  it('is copied once with the ports written in, and an edit survives the next start', () => {
    const data = dataDir();
    const first = prepare(data, '18080', '18083');
    expect(first.stdout).toContain('a copy of deploy/example/master.yaml made now');
    expect(first.stderr).toBe('');
    expect(first.text).toContain('buildbotURL: http://127.0.0.1:18080/');
    expect(first.text).toContain('baseURL: http://127.0.0.1:18083\n');
    expect(first.text).toContain(`users_file: ${data}/users.yaml`);
    expect(first.text).not.toMatch(/127\.0\.0\.1:808[03]|\.data\/local\//);
    expect(statSync(join(data, 'master.yaml')).mode & 0o777).toBe(0o600);
    // The processes load the copy as they load the example.
    expect(loadMasterConfig(join(data, 'master.yaml')).buildbotURL).toBe('http://127.0.0.1:18080/');

    const edited = first.text.replace('title: Flotilla local example', 'title: My own CI');
    writeFileSync(join(data, 'master.yaml'), edited);
    const second = prepare(data, '18080', '18083');
    expect(second.text).toBe(edited);
    expect(second.stdout).toContain('your copy, kept as it is');
    expect(second.stdout).toContain('then npm run reload: the API and the master run it at once');
    expect(second.stdout).not.toContain('WARNING');
    expect(second.stderr).toBe('');
  });

  it('says when the ports of a start differ from the copy, and keeps the copy', () => {
    const data = dataDir();
    const made = prepare(data, '18080', '18083').text;
    const moved = prepare(data, '19090', '18083');
    expect(moved.text).toBe(made);
    const warning = `WARNING: ${data}/master.yaml was made with PORT=18080 but this start has PORT=19090`;
    expect(moved.stderr).toContain(warning);
    expect(moved.stdout).toContain(warning);
    expect(moved.stdout).toContain(`rm ${data}/master.yaml`);
    expect(moved.stdout).not.toContain('REPORTS_PORT=');

    // Deleting the copy is how to get a fresh one, with the new ports.
    rmSync(join(data, 'master.yaml'));
    const fresh = prepare(data, '19090', '18083');
    expect(fresh.text).toContain('buildbotURL: http://127.0.0.1:19090/');
    expect(fresh.stderr).toBe('');
  });

  it('says when the example changed since the copy was made, and a copy with no record', () => {
    const data = dataDir();
    const example = join(data, 'example.yaml');
    copyFileSync(EXAMPLE, example);
    prepare(data, '18080', '18083', example);
    appendFileSync(example, '# a new line upstream\n');
    const changed = prepare(data, '18080', '18083', example);
    expect(changed.stderr).toContain(`WARNING: ${example} has changed since ${data}/master.yaml was made`);
    expect(changed.text).not.toContain('a new line upstream');

    // An older npm start's copy (no first line saying how it was made) is kept too.
    writeFileSync(join(data, 'master.yaml'), 'workers: []\n');
    const old = prepare(data, '18080', '18083', example);
    expect(old.text).toBe('workers: []\n');
    expect(old.stderr).toContain('has no record of the ports it was made with');
    expect(old.stdout).toContain('Retention: none in');
  });

  it("prints a line on the copy's retention, from the copy", () => {
    const r = prepareLocalConfig({
      example: EXAMPLE,
      copy: join(dataDir(), 'master.yaml'),
      data: '/nowhere',
      apiPort: '8080',
      reportsPort: '8083',
    });
    expect(r.made).toBe(true);
    const line = r.lines.find((l) => l.startsWith('Retention'));
    expect(line).toMatch(/^Retention \(docs\/retention\.md\) deletes .* every 300 s: /);
    expect(line).toContain('builders.example.logHorizon 30m');
    expect(line).toContain('builders.hello.max_builds 5');
  });
});

describe('the example configuration', () => {
  it('loads with npm run checkconfig, as copied by npm start', () => {
    const data = dataDir();
    prepare(data, '18080', '18083');
    for (const file of [EXAMPLE, join(data, 'master.yaml')]) {
      const r = spawnSync(process.execPath, [...serviceCommand('services/master/checkconfig.ts'), file], {
        encoding: 'utf8',
      });
      expect([r.status, r.stderr], r.stderr).toEqual([0, '']);
      expect(r.stdout).toBe(
        `${file}: ok: 2 builders, 1 worker, 3 schedulers (2 force), 2 reporters, 1 change source\n`,
      );
    }
  });

  it('has retention a newcomer sees act within an hour of builds', () => {
    const { retention, builders } = loadMasterConfig(EXAMPLE);
    // The cleanup runs several times an hour ...
    expect(retention.period_seconds).toBeLessThanOrEqual(600);
    const plan = (name: string) => {
      const b = builders.find((x) => x.name === name)!;
      return builderPlan(retention, { id: 1, name, tags: b.tags });
    };
    // ... the example's logs and test reports go half an hour after the build ...
    expect(plan('example').logs).toBeLessThanOrEqual(1800);
    expect(plan('example').artifacts).toBeLessThanOrEqual(1800);
    // ... a handful of forced hellos already pass the maximum ...
    expect(plan('hello').maxBuilds).toBeLessThanOrEqual(5);
    // ... and nothing is kept forever.
    for (const name of builders.map((b) => b.name))
      expect(Object.values(plan(name)).every((v) => v !== null)).toBe(true);
    expect([retention.change_horizon, retention.request_horizon]).not.toContain(undefined);
  });
});
