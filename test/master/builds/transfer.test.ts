// The transfer steps (Buildbot's FileUpload, DirectoryUpload, MultipleFileUpload, FileDownload,
// StringDownload) in real builds: an in-process master on a real database runs them against a
// real Flotilla agent (over its WebSocket protocol) and a real buildbot-worker 3.7 (over
// msgpack), the same configuration on each. Checked: the bytes stored as artifacts (PostgreSQL
// large objects) are the worker's, byte for byte, a directory's as its tar archive; the step
// links them; the API lists them and serves them back; downloads land with their mode; a
// missing file, maxsize (the step's, or artifacts.default_maxsize) and a missing master file
// fail the step as Buildbot's do, keeping nothing, and halt the build.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { eventually, waitFor } from '../../helpers/wait.js';
import { type InProcessMaster, Stage } from '../in-process.js';
import { apiOn, finishedBuild, logs, request, steps } from './lib.js';
import { type RealWorkers, startRealWorkers } from './real-workers.js';

const root = mkdtempSync(join(tmpdir(), 'flotilla-transfer-steps-'));
const agentDir = join(root, 'agent');
const bbwDir = join(root, 'bbw');
const masterFile = join(root, 'on-master.bin');
const masterBytes = randomBytes(100 * 1024 + 5);
writeFileSync(masterFile, masterBytes);

// An upload that is still going when the build is stopped: on the agent a pipe, which has
// what the test writes into it and waits for more; buildbot-worker reads its file in the
// reactor (a pipe would block the whole worker), so there 50 MB sent in 1 KiB blocks, each
// stored before the next is asked for.
const SLOW_SOURCE = { agent: 'rm -f slow && mkfifo slow', bbw: 'head -c 50000000 /dev/zero > slow' };

const artifacts = (worker: string) => `
  - name: art-${worker}
    workers: [${worker}]
    properties: { who: world }
    steps:
      - { type: string_download, s: "hello %(prop:who)s\\n", workerdest: out/hello.txt, mode: 0o750 }
      - type: shell
        name: make
        command: "mkdir -p dist/sub && cp out/hello.txt dist/a.txt && echo b > dist/b.txt && head -c 300000 /dev/urandom > dist/sub/big.bin"
      - { type: file_upload, workersrc: dist/a.txt, masterdest: "hello-%(prop:who)s.txt", url: "https://example.test/a", urlText: mirror }
      - { type: file_upload, workersrc: dist/sub/big.bin, masterdest: big.bin, blocksize: 65536 }
      - { type: directory_upload, workersrc: dist, masterdest: dist, compress: gz }
      - { type: multiple_file_upload, workersrcs: [dist/b.txt, dist/sub], masterdest: many }
      - { type: multiple_file_upload, workersrcs: ["dist/*.txt"], glob: true, masterdest: globbed }
      - { type: file_download, artifact: big.bin, workerdest: back/big.bin, mode: 0o600 }
      - { type: file_download, mastersrc: ${JSON.stringify(masterFile)}, workerdest: back/from-master.bin }
      - { type: shell, name: check, command: "cmp back/big.bin dist/sub/big.bin && test \\"$(stat -c %a back/big.bin)\\" = 600" }
  - name: fail-${worker}
    workers: [${worker}]
    steps:
      - { type: shell, name: make, command: "echo 0123456789 > small.txt && head -c 500000 /dev/zero > big.bin" }
      - { type: file_upload, name: capped, workersrc: small.txt, masterdest: capped.txt, maxsize: 4, haltOnFailure: false }
      - { type: file_upload, name: defaulted, workersrc: big.bin, masterdest: big.bin, haltOnFailure: false }
      - { type: file_download, name: nothing-here, mastersrc: /nonexistent/flotilla/file, workerdest: x, haltOnFailure: false }
      - { type: multiple_file_upload, name: none, workersrcs: [nope.txt], masterdest: m, haltOnFailure: false }
      - { type: file_upload, name: missing, workersrc: nope.txt, masterdest: nope.txt }
      - { type: shell, name: after, command: "echo never" }
  - name: stop-${worker}
    workers: [${worker}]
    steps:
      - { type: shell, name: make, command: ${JSON.stringify(SLOW_SOURCE[worker as 'agent' | 'bbw'])} }
      - { type: file_upload, workersrc: slow, masterdest: slow.bin, blocksize: 1024, maxsize: 100000000 }
      - { type: shell, name: after, command: "echo never" }
`;

const CONFIG = `
log_compression: none
buildbotURL: http://ci.example.test
# The default is small enough for the fail builders' 500000 bytes and large enough for what
# art uploads; the stop builders' upload sets its own maxsize, which the quota leaves it.
artifacts: { default_maxsize: 400000, build_quota: 100000000 }
workers: [{ name: agent, password: pw }, { name: bbw, password: pw }]
builders:
${artifacts('agent')}
${artifacts('bbw')}
`;

let stage: Stage;
let masters: InProcessMaster[];
let workers: RealWorkers;
let api: Awaited<ReturnType<typeof apiOn>>;

beforeAll(async () => {
  stage = await Stage.open();
  // One master with the Flotilla agent, one with the buildbot-worker: each builds its own builders.
  workers = await startRealWorkers(stage, CONFIG, root, ['art-bbw', 'fail-bbw', 'stop-bbw']);
  masters = workers.masters;
  api = await apiOn(stage);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await workers?.stop();
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

const get = (path: string) => api.get(path);

describe.each([
  ['agent', agentDir],
  ['bbw', bbwDir],
])('transfer steps on %s', (worker, base) => {
  it('upload files, a directory and several, download them back, link and serve them', async () => {
    const { brid } = await request(stage, `art-${worker}`);
    const build = await finishedBuild(stage, brid, 90_000);
    const ran = (await steps(stage, build.id)).filter((s) => s.name !== 'worker_preparation');
    expect(ran.map((s) => [s.name, s.results, s.state_string])).toEqual([
      ['string_download', Results.SUCCESS, 'downloading to hello.txt'],
      ['make', Results.SUCCESS, expect.any(String)],
      ['upload', Results.SUCCESS, 'uploading a.txt'],
      ['upload_1', Results.SUCCESS, 'uploading big.bin'],
      ['upload_2', Results.SUCCESS, 'uploading dist'],
      ['upload_3', Results.SUCCESS, 'uploading 2 files'],
      ['upload_4', Results.SUCCESS, 'uploading 2 files'],
      ['download', Results.SUCCESS, 'downloading to big.bin'],
      ['download_1', Results.SUCCESS, 'downloading to from-master.bin'],
      ['check', Results.SUCCESS, expect.any(String)],
    ]);
    expect(build.results).toBe(Results.SUCCESS);

    const workdir = join(base, `art-${worker}`, 'build');
    expect(readFileSync(join(workdir, 'out', 'hello.txt'), 'utf8')).toBe('hello world\n');
    expect(statSync(join(workdir, 'out', 'hello.txt')).mode & 0o777).toBe(0o750);
    expect(readFileSync(join(workdir, 'back', 'from-master.bin')).equals(masterBytes)).toBe(true);

    // The first upload carries Buildbot's url link and the artifact's own.
    const urls = JSON.parse(ran[2]!.urls_json) as { name: string; url: string }[];
    expect(urls[0]).toEqual({ name: 'mirror', url: 'https://example.test/a' });
    expect(urls[1]).toEqual({
      name: 'hello-world.txt',
      url: expect.stringMatching(/^http:\/\/ci\.example\.test\/api\/v2\/artifacts\/\d+\/raw$/),
    });

    const list = await get(`/builds/${build.id}/artifacts`);
    expect(list.statusCode).toBe(200);
    const rows = list.json().artifacts as {
      artifactid: number;
      name: string;
      kind: string;
      length: number;
    }[];
    expect(rows.map((r) => [r.name, r.kind])).toEqual([
      ['hello-world.txt', 'file'],
      ['big.bin', 'file'],
      ['dist', 'directory'],
      ['many/b.txt', 'file'],
      ['many/sub', 'directory'],
      ['globbed/a.txt', 'file'],
      ['globbed/b.txt', 'file'],
    ]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const number = (await stage.db.pool.query(sql`SELECT number FROM builds WHERE id = ${build.id}`))[0]
      .number;
    const named = await get(
      `/builders/art-${worker}/builds/${number}/artifacts?field=name&field=artifactid&order=-artifactid&limit=2`,
    );
    expect(named.statusCode, named.body).toBe(200);
    expect(named.json().artifacts.map((a: { name: string }) => a.name)).toEqual([
      'globbed/b.txt',
      'globbed/a.txt',
    ]);

    // Served back byte for byte, through the link the step carries.
    const linked = new URL(urls[1]!.url).pathname;
    const hello = await api.app.inject({ method: 'GET', url: linked });
    expect(hello.statusCode).toBe(200);
    expect(hello.body).toBe('hello world\n');
    expect(hello.headers['content-disposition']).toMatch(/filename="hello-world.txt"/);
    const big = await get(`/artifacts/${byName.get('big.bin')!.artifactid}/raw`);
    expect(big.rawPayload.equals(readFileSync(join(workdir, 'dist', 'sub', 'big.bin')))).toBe(true);
    expect(Number(big.headers['content-length'])).toBe(300000);
    const again = await api.app.inject({
      method: 'GET',
      url: `/api/v2/artifacts/${byName.get('big.bin')!.artifactid}/raw`,
      headers: { 'if-none-match': String(big.headers.etag) },
    });
    expect(again.statusCode).toBe(304);

    const dist = await get(`/artifacts/${byName.get('dist')!.artifactid}/raw`);
    expect(dist.headers['content-type']).toBe('application/gzip');
    expect(dist.headers['content-disposition']).toMatch(/filename="dist.tar.gz"/);
    const listing = execFileSync('tar', ['-t', '-z', '-f', '-'], { input: dist.rawPayload }).toString();
    expect(listing).toMatch(/a\.txt/);
    expect(listing).toMatch(/sub\/big\.bin/);
    const sub = await get(`/artifacts/${byName.get('many/sub')!.artifactid}/raw`);
    expect(execFileSync('tar', ['-t', '-f', '-'], { input: sub.rawPayload }).toString()).toMatch(/big\.bin/);

    const one = await get(`/artifacts/${byName.get('many/b.txt')!.artifactid}`);
    expect(one.json().artifacts[0]).toMatchObject({ name: 'many/b.txt', length: 2, buildid: build.id });
  }, 120_000);

  it('a missing file, maxsize and a missing master file fail as Buildbot says, keeping nothing', async () => {
    const { brid } = await request(stage, `fail-${worker}`);
    const build = await finishedBuild(stage, brid, 90_000);
    const ran = (await steps(stage, build.id)).filter((s) => s.name !== 'worker_preparation');
    // `missing` halts the build (transfer steps haltOnFailure by default): `after` never runs.
    expect(ran.map((s) => [s.name, s.results])).toEqual([
      ['make', Results.SUCCESS],
      ['capped', Results.FAILURE],
      ['defaulted', Results.FAILURE],
      ['nothing-here', Results.FAILURE],
      ['none', Results.FAILURE],
      ['missing', Results.FAILURE],
    ]);
    expect(build.results).toBe(Results.FAILURE);
    expect((await logs(stage, build.id, 'capped')).stdio).toMatch(/Maximum filesize reached/);
    // The worker was told the master's default as its maxsize, and the log says whose limit it was.
    const defaulted = (await logs(stage, build.id, 'defaulted')).stdio;
    expect(defaulted).toMatch(/Maximum filesize reached/);
    expect(defaulted).toMatch(
      /The upload reached its limit of 400000 bytes: the step sets no maxsize, and artifacts.default_maxsize is 400000 bytes/,
    );
    expect((await logs(stage, build.id, 'nothing-here')).stderr).toBe(
      "File '/nonexistent/flotilla/file' not available at master",
    );
    expect((await logs(stage, build.id, 'none')).stderr).toBe('File build/nope.txt not available at worker');
    expect((await logs(stage, build.id, 'missing')).stdio).toMatch(
      /Cannot open file '.*nope\.txt' for upload/,
    );
    const kept = await stage.db.pool.query(
      sql`SELECT count(*)::int AS n FROM flotilla.artifacts WHERE buildid = ${build.id}`,
    );
    expect(kept[0].n).toBe(0);
    const objects = await stage.db.pool.query(
      sql`SELECT count(*)::int AS n FROM pg_largeobject_metadata m WHERE NOT EXISTS (SELECT 1 FROM flotilla.artifacts a WHERE a.object = m.oid)`,
    );
    expect(objects[0].n).toBe(0);
    expect((await get(`/builds/${build.id}/artifacts`)).json().artifacts).toEqual([]);
  }, 120_000);

  it('a stop mid-upload cancels the step and keeps nothing, neither listed half-written nor after', async () => {
    const { brid } = await request(stage, `stop-${worker}`);
    const slow = join(base, `stop-${worker}`, 'build', 'slow');
    let writer: FileHandle | undefined;
    try {
      if (worker === 'agent') {
        await waitFor('the pipe', () => existsSync(slow));
        // Opened once the upload opens it to read.
        writer = await open(slow, 'w');
        await writer.write(randomBytes(64 * 1024));
      }
      const [partial] = await eventually(
        () =>
          stage.db.pool.query(sql`
            SELECT a.id, a.buildid, a.object, a.length::int AS length FROM flotilla.artifacts a
            JOIN builds b ON b.id = a.buildid WHERE b.buildrequestid = ${brid}`) as Promise<
            { id: number; buildid: number; object: number; length: number }[]
          >,
        (rows) => rows.length === 1 && rows[0]!.length > 0,
        { timeoutMs: 90_000 },
      );
      // Being written: neither listed nor served.
      expect((await get(`/builds/${partial!.buildid}/artifacts`)).json().artifacts).toEqual([]);
      expect((await get(`/artifacts/${partial!.id}/raw`)).statusCode).toBe(404);

      expect(masters.map((m) => m.master.runner.stop(partial!.buildid, 'enough')).includes(true)).toBe(true);
      const build = await finishedBuild(stage, brid, 90_000);
      const ran = (await steps(stage, build.id)).filter((s) => s.name !== 'worker_preparation');
      expect(ran.map((s) => [s.name, s.results])).toEqual([
        ['make', Results.SUCCESS],
        ['upload', Results.CANCELLED],
      ]);
      expect(build.results).toBe(Results.CANCELLED);
      const kept = await stage.db.pool.query(
        sql`SELECT count(*)::int AS n FROM flotilla.artifacts WHERE buildid = ${build.id}`,
      );
      expect(kept[0].n).toBe(0);
      const object = await stage.db.pool.query(
        sql`SELECT count(*)::int AS n FROM pg_largeobject_metadata WHERE oid = ${partial!.object}`,
      );
      expect(object[0].n).toBe(0);
    } finally {
      await writer?.close();
    }
  }, 180_000);
});

describe('the API on artifacts', () => {
  it('an artifact that does not exist is a 404, and a bad id is not a 500', async () => {
    expect((await get('/artifacts/999999/raw')).statusCode).toBe(404);
    expect((await get('/artifacts/999999')).statusCode).toBe(404);
    expect((await get('/artifacts/x/raw')).statusCode).toBe(404);
    const spec = (await get('/application.spec')).json().specs as { path: string }[];
    expect(spec.some((s) => s.path.includes('artifact'))).toBe(false);
  });
});
