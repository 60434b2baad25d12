// Imported builders run as Buildbot runs them (issue 31 §1: "the builds it describes produce
// the same step names, results and state strings as Buildbot's on the same commits"). Every
// builder of the test configurations that can run here (the oracle's master.cfg, kinds.cfg,
// steps.cfg, and pipeline.cfg on a git repository the test makes) is built twice from the same
// request: by a real Buildbot 3.7 master (Debian's package, the configurations loaded as they
// are, one master for all: test/e2e/imported-builders.cfg) with a real buildbot-worker, and by
// a Flotilla master on what the real importer wrote for the same files, with the same
// buildbot-worker 3.7. Each build's result, state string, source stamps and the properties its
// steps and triggers set, its steps' names, results, state strings and log names, and the same
// of the builds it triggered, are compared builder by builder. Both sides store Buildbot's
// schema, so the same queries read either database (Buildbot's SQLite file, Flotilla's
// PostgreSQL).
//
// Where a difference comes from something the importer cannot convert (a step class defined in
// master.cfg, a Python callable), it is listed in LOST below with the importer's loss line that
// explains it; Buildbot's own failures and races are named where they are handled (and in
// docs/migrating-from-buildbot.md). The comparison leaves out exactly those, nothing else.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { forceOneRequest } from '../../load/force.js';
import { type ConnectionPool, type SQLQuery, sql } from '../../services/core/db/pool.js';
import { Results } from '../../services/core/results.js';
import { type BuildbotMaster, startBuildbotMaster } from '../helpers/buildbot-master.js';
import { createBuildbotWorker, startBuildbotWorker } from '../helpers/buildbot-worker.js';
import type { Running } from '../helpers/processes.js';
import { eventually } from '../helpers/wait.js';
import { request, type Stamp } from '../master/builds/lib.js';
import { realWorkersSuite } from '../master/builds/real-workers.js';

const ORACLE = 'test/fixtures/buildbot-3.7/master.cfg';
const KINDS = 'test/fixtures/buildbot-import/kinds.cfg';
const STEPS = 'test/fixtures/buildbot-import/steps.cfg';

// pipeline.cfg checks out https://git.example.org/app.git: both sides get the same copy of
// it on a git repository the test makes (a C project's make targets, one commit), its
// `package` builder renamed `pipeline-package` (the oracle has a `package`).
const REPO = mkdtempSync(join(tmpdir(), 'imported-builders-repo-'));
const git = (...args: string[]) => execFileSync('git', ['-C', REPO, ...args], { stdio: 'ignore' });
git('init', '-q', '-b', 'main');
writeFileSync(
  join(REPO, 'Makefile'),
  'all:\n\t@echo "cc $(CFLAGS) -o app, version $(VERSION)"\ntest:\n\t@echo "ran 2 tests"\ndist:\n\t@echo packed\n',
);
git('add', 'Makefile');
git('-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', 'commit', '-q', '-m', 'app');
const HEAD = execFileSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const PIPELINE = join(REPO, 'pipeline.cfg');
writeFileSync(
  PIPELINE,
  readFileSync('test/fixtures/buildbot-import/pipeline.cfg', 'utf8')
    .replaceAll('https://git.example.org/app.git', REPO)
    .replace("util.BuilderConfig(name='package'", "util.BuilderConfig(name='pipeline-package'")
    .replace("builderNames=['package']", "builderNames=['pipeline-package']"),
);
const CONFIGS = [ORACLE, KINDS, STEPS, PIPELINE];

/** The builders compared, each forced with these force-scheduler fields on Buildbot. */
const CASES: { builder: string; scheduler: string; fields?: Record<string, string> }[] = [
  { builder: 'runtests', scheduler: 'force-runtests' },
  { builder: 'build', scheduler: 'force-build' },
  { builder: 'package', scheduler: 'force-package' },
  { builder: 'package', scheduler: 'force-package', fields: { fail: 'yes' } },
  { builder: 'flaky', scheduler: 'force-flaky', fields: { mode: 'pass' } },
  { builder: 'deploy', scheduler: 'force-deploy' },
  { builder: 'c-project', scheduler: 'force' },
  { builder: 'on-master', scheduler: 'force-steps' },
  { builder: 'counting', scheduler: 'force-steps' },
  { builder: 'app-debug', scheduler: 'force-app' },
  { builder: 'app-release', scheduler: 'force-app', fields: { version: '2.0' } },
];

/**
 * Steps Buildbot runs that the import does not have, each with the importer's loss line
 * (test/import/importer.test.ts asserts those lines): step classes defined in master.cfg.
 */
const LOST: Record<string, string[]> = {
  runtests: ['report'], // builder runtests, step 6 (report): step class ReportStep (defined in master.cfg)
  flaky: ['mode'], // builder flaky, step 1 (mode): step class ModeStep (defined in master.cfg)
};

// kinds.cfg has no source step: its builder works in what the worker's build directory holds,
// so both workers get the same project there (a C project's make targets, in shell).
const MAKEFILE = `all:
\t@echo 'cc -c src/main.c'
\t@echo 'src/main.c:12: warning: unused variable x'
\t@echo 'src/util.c:40: Warning: call to deprecated function'
\t@echo 'src/io.c:7: warning: implicit declaration of read_all'
\t@echo 'cc -o app src/main.o'
check:
\t@echo 'ran 3 tests: ok'
lint:
\t@echo 'lint: warning: line too long'
dist:
\tmkdir -p dist && echo app > dist/app.txt
`;
// Buildbot's suppression file: "file : warning pattern", comments and blank lines skipped.
const SUPPRESSIONS = '# known\n\nsrc/io\\.c : implicit declaration\n';

function placeProject(workerDir: string): void {
  const dir = join(workerDir, 'cproj', 'build');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'Makefile'), MAKEFILE);
  writeFileSync(join(dir, '.warnings-ok'), SUPPRESSIONS);
}

/** One database's rows for a query: Flotilla's PostgreSQL, or Buildbot's SQLite file. */
type Read = (q: SQLQuery) => Promise<Record<string, unknown>[]>;

const fromPostgres =
  (pool: ConnectionPool): Read =>
  (q) =>
    pool.query(q) as Promise<Record<string, unknown>[]>;

// Buildbot on SQLite, as its own default: with one connection (db/enginestrategy.py) its
// writes land in the order it makes them. On PostgreSQL its pool runs them on several threads
// and two it does not wait for can land out of order, leaving a finished step's state string
// "Running" or a build's without its first word, as seen under load.
function fromSqlite(path: string): Read {
  const db = new DatabaseSync(path, { readOnly: true, timeout: 10_000 });
  return async (q) => {
    const { text, values } = q.format({
      escapeIdentifier: (id) => `"${id}"`,
      formatValue: (value) => ({ placeholder: '?', value }),
    });
    return db.prepare(text).all(...(values as SQLInputValue[])) as Record<string, unknown>[];
  };
}

/** The properties compared: those the steps and triggers of these configurations set. */
const PROPS = [
  'stage',
  'answer',
  'version',
  'parent_version',
  'fail',
  'flavour',
  'jobs',
  'greeting',
  'count',
  'extra',
  'five',
  'warnings-count',
  'got_revision',
  'built_by',
];

interface Outcome {
  builder: string;
  results: number | null;
  state_string: string;
  stamps: Record<string, unknown>[];
  properties: Record<string, unknown>;
  steps: Step[];
  triggered: Outcome[];
}
type Step = { name: string; results: number | null; state_string: string; logs: string[] };

/** A finished build of request `brid` as either database stores it, with what it triggered. */
async function outcome(read: Read, brid: number, timeoutMs = 120_000): Promise<Outcome> {
  const [build] = await eventually(
    () =>
      read(sql`
        SELECT b.id, b.results, b.state_string, r.name AS builder, b.buildrequestid
        FROM builds b JOIN builders r ON r.id = b.builderid
        WHERE b.buildrequestid = ${brid} AND b.results IS NOT NULL ORDER BY b.id`),
    (rows) => rows.length > 0,
    { timeoutMs, everyMs: 200 },
  );
  if (!build) throw new Error(`no finished build of request ${brid}`);
  const steps: Step[] = [];
  for (const s of await read(sql`
    SELECT id, name, results, state_string FROM steps WHERE buildid = ${build.id} ORDER BY number`)) {
    const logs = await read(sql`SELECT name FROM logs WHERE stepid = ${s.id} ORDER BY id`);
    steps.push({
      name: s.name as string,
      results: s.results as number | null,
      state_string: s.state_string as string,
      logs: logs.map((l) => l.name as string),
    });
  }
  const props = await read(sql`
    SELECT name, value FROM build_properties WHERE buildid = ${build.id} ORDER BY name`);
  const stamps = await read(sql`
    SELECT ss.codebase, ss.repository, ss.branch, ss.revision
    FROM buildrequests r JOIN buildset_sourcestamps bs ON bs.buildsetid = r.buildsetid
    JOIN sourcestamps ss ON ss.id = bs.sourcestampid WHERE r.id = ${brid} ORDER BY ss.codebase`);
  const children = await read(sql`
    SELECT r.id FROM buildrequests r JOIN buildsets s ON s.id = r.buildsetid
    WHERE s.parent_buildid = ${build.id} ORDER BY r.id`);
  const triggered: Outcome[] = [];
  for (const c of children) triggered.push(await outcome(read, c.id as number, timeoutMs));
  return {
    builder: build.builder as string,
    results: build.results as number,
    state_string: build.state_string as string,
    stamps,
    properties: Object.fromEntries(
      props
        .filter((p) => PROPS.includes(p.name as string))
        .map((p) => [p.name, JSON.parse(p.value as string)]),
    ),
    steps,
    triggered,
  };
}

/**
 * Where Buildbot 3.7 itself fails: kinds.cfg's `announce` is a MasterShellCommand whose list
 * command holds util.Property('buildnumber'), a number, and Buildbot's step joins the list
 * for its log header (steps/master.py: " ".join(command)), so it raises TypeError (EXCEPTION,
 * its traceback in err.text and err.html) before running anything. Flotilla renders the number
 * as text and runs the command, which is not on the master: "failed (1)", as Buildbot's own
 * MasterShellCommand ends for a command that cannot start (the `cannot start` step of
 * steps.cfg compares that). docs/migrating-from-buildbot.md names it.
 */
const BUILDBOT_FAILS: Record<
  string,
  { step: string; buildbot: Step; flotilla: Step; build: [number, string] }
> = {
  'c-project': {
    step: 'announce',
    buildbot: {
      name: 'announce',
      results: 4,
      state_string: 'Ran (exception)',
      logs: ['stdio', 'err.text', 'err.html'],
    },
    flotilla: { name: 'announce', results: 2, state_string: 'failed (1) (failure)', logs: ['stdio'] },
    build: [2, "failed 'make lint' (warnings) failed (1) (failure)"],
  },
};

/** What Flotilla's build should be: Buildbot's, less the steps the import lost (LOST). */
/**
 * Properties a trigger sets from util.Property('count') (steps.cfg's `trigger child`): Buildbot
 * passes the property's value as it is (7), the import writes it as the template
 * `%(prop:count)s`, which Flotilla renders as text ("7"). docs/migrating-from-buildbot.md.
 */
const AS_TEXT: Record<string, string[]> = { child: ['extra'] };

// Buildbot 3.7 now and then keeps a finished step's text from while it ran: its summary
// updates are debounced (util/debounce.py), and when one is still being written as the step
// ends, stop() waits for it and then drops the final one queued behind it. It is seen on a
// busy machine ("running" for a shell step, "testing" for Test). These are the texts it
// shows while running; where Buildbot's stored text is one of them, Flotilla's final text is
// taken for that one field (the step's result and logs are still compared).
const WHILE_RUNNING = new Set([
  'running',
  'Running',
  'testing',
  'compiling',
  'Deleting',
  'Creating',
  'Copying',
  'Setting',
  'triggering',
]);

function expected(o: Outcome, ours: Outcome | undefined): Outcome {
  const lost = LOST[o.builder] ?? [];
  let steps = o.steps.filter((s) => !lost.includes(s.name));
  let { results, state_string } = o;
  const bug = BUILDBOT_FAILS[o.builder];
  if (bug) {
    expect(steps.find((s) => s.name === bug.step)).toEqual(bug.buildbot);
    steps = steps.map((s) => (s.name === bug.step ? bug.flotilla : s));
    [results, state_string] = bug.build;
  }
  steps = steps.map((s, i) => {
    const mine = ours?.steps[i];
    return WHILE_RUNNING.has(s.state_string) && mine?.name === s.name
      ? { ...s, state_string: mine.state_string }
      : s;
  });
  const properties = Object.fromEntries(
    Object.entries(o.properties).map(([k, v]) => [k, AS_TEXT[o.builder]?.includes(k) ? String(v) : v]),
  );
  return {
    ...o,
    results,
    state_string,
    properties,
    steps,
    triggered: o.triggered.map((t, i) => expected(t, ours?.triggered[i])),
  };
}

/** The request Buildbot's force scheduler made: its source stamps and properties. */
async function buildbotRequest(read: Read, brid: number) {
  const stamps = await read(sql`
    SELECT ss.codebase, ss.repository, ss.branch, ss.revision
    FROM buildrequests r JOIN buildset_sourcestamps bs ON bs.buildsetid = r.buildsetid
    JOIN sourcestamps ss ON ss.id = bs.sourcestampid WHERE r.id = ${brid} ORDER BY ss.id`);
  const props = await read(sql`
    SELECT p.property_name, p.property_value
    FROM buildrequests r JOIN buildset_properties p ON p.buildsetid = r.buildsetid
    WHERE r.id = ${brid}`);
  return {
    stamps: stamps as Stamp[],
    properties: Object.fromEntries(
      props.map((p) => [
        p.property_name as string,
        JSON.parse(p.property_value as string) as [unknown, string],
      ]),
    ),
  };
}

/** One YAML configuration of every test configuration's import, all builders on `bbw`. */
async function imported(): Promise<string> {
  const merged = {
    log_compression: 'none',
    properties: {} as Record<string, unknown>,
    workers: [
      { name: 'agent', password: 'pw' },
      { name: 'bbw', password: 'pw', max_builds: 20 },
    ],
    builders: [] as { name: string; workers: string[] }[],
    schedulers: [] as unknown[],
    force_schedulers: [] as unknown[],
    locks: [] as unknown[],
  };
  for (const cfg of CONFIGS) {
    const { stdout } = await promisify(execFile)('sh', ['deploy/import/import-buildbot-config.sh', cfg]);
    const y = parse(stdout) as typeof merged;
    Object.assign(merged.properties, y.properties ?? {});
    merged.builders.push(...y.builders.map((b) => ({ ...b, workers: ['bbw'] })));
    merged.schedulers.push(...(y.schedulers ?? []));
    merged.force_schedulers.push(...(y.force_schedulers ?? []));
    // Per-worker counts name the configuration's own workers, which `bbw` replaces (Buildbot
    // ignores the names it does not know: bbw gets maxCount on both sides).
    merged.locks.push(...(y.locks ?? []).map((l) => ({ ...(l as object), maxCountForWorker: {} })));
  }
  return stringify(merged);
}

const YAML = await imported();
const suite = realWorkersSuite(
  'imported-builders-',
  YAML,
  (parse(YAML) as { builders: { name: string }[] }).builders.map((b) => b.name),
);
let bbRead: Read;
let bb: BuildbotMaster;
let bbWorker: Running;

beforeAll(async () => {
  // `create-master` makes Buildbot's own schema in its SQLite file (fromSqlite says why SQLite);
  // it exits 0 whatever fails, so the file is looked for.
  const side = join(suite.root, 'buildbot-side');
  const state = join(side, 'state.sqlite');
  mkdirSync(side);
  await promisify(execFile)('buildbot', ['create-master', `--db=sqlite:///${state}`, join(side, 'create')]);
  if (!existsSync(state)) throw new Error(`buildbot create-master made no ${state}`);
  bb = await startBuildbotMaster('test/e2e/imported-builders.cfg', `sqlite:///${state}`, {
    www: true,
    env: { BB_CONFIGS: CONFIGS.map((c) => resolve(c)).join(':') },
  });
  const dir = join(side, 'bbw');
  createBuildbotWorker({ dir, port: bb.pbPort, name: 'bbw', password: 'pw', protocol: 'pb' });
  placeProject(dir);
  placeProject(join(suite.root, 'bbw'));
  bbWorker = startBuildbotWorker(dir);
  bbRead = fromSqlite(state);
}, 120_000);

afterAll(async () => {
  await bbWorker?.stop();
  await bb?.stop();
  rmSync(REPO, { recursive: true, force: true });
});

/** Force `builder` on Buildbot through its REST API, as its web UI does; the request's id. */
async function forceOnBuildbot(c: (typeof CASES)[number]): Promise<number> {
  const [row] = await bbRead(sql`SELECT id FROM builders WHERE name = ${c.builder}`);
  return forceOneRequest(bb.api!, c.scheduler, { builderid: String(row!.id), ...c.fields });
}

describe.each(CASES)('builder $builder (force: $scheduler $fields)', (c) => {
  it("builds as Buildbot 3.7 builds it: the build's and each step's result and state string, and log names", async () => {
    const bbBrid = await forceOnBuildbot(c);
    const made = await buildbotRequest(bbRead, bbBrid);
    const { brid } = await request(suite.stage, c.builder, made.stamps, made.properties);
    const [theirs, ours] = await Promise.all([
      outcome(bbRead, bbBrid),
      outcome(fromPostgres(suite.stage.db.pool), brid),
    ]);
    expect(ours).toEqual(expected(theirs, ours));
    // pipeline.cfg's builds checked the repository out, and triggered its packaging.
    if (c.builder.startsWith('app-')) {
      expect([theirs.results, theirs.properties.got_revision]).toEqual([Results.SUCCESS, HEAD]);
      expect(theirs.triggered.map((t) => [t.builder, t.results])).toEqual([
        ['pipeline-package', Results.SUCCESS],
      ]);
    }
  });
});
