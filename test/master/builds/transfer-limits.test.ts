// Upload sizes are the master's to enforce (issue 28, docs/security.md "Upload sizes"): a
// worker that sends past its step's maxsize, past artifacts.default_maxsize when the step
// sets none, or past what artifacts.build_quota leaves its build, is cut at the limit by the
// master, on both protocols; the step fails with the reason in its log, nothing of the upload
// is kept, and the build fails. And a download's read length, which buildbot-worker names
// itself, is bounded before the master allocates anything for it. What a worker says during
// a transfer, and a command's stdout a step collects (a glob's matches), are bounded too.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { MAX_COLLECTED_STDOUT } from '../../../services/master/builds/steps/remote.js';
import { MAX_COMMAND_TEXT } from '../../../services/master/workers/command-text.js';
import { MAX_READ_BYTES } from '../../../services/master/workers/connection.js';
import { startWorkerServer } from '../../../services/master/workers/flotilla/server.js';
import { encodeFrame, parseWorkerFrame } from '../../../services/master/workers/msgpack/messages.js';
import { startMsgpackWorkerServer } from '../../../services/master/workers/msgpack/server.js';
import { freePort } from '../../helpers/processes.js';
import { Stage } from '../in-process.js';
import { hostileAgent, hostileBbw } from './hostile-workers.js';
import { logs, ranBuild } from './lib.js';

const log = createLogger('test', 'silent');
const root = mkdtempSync(join(tmpdir(), 'flotilla-transfer-limits-'));
// Larger than the bound, so that a read not bounded would answer all of it.
const masterFile = join(root, 'on-master.bin');
writeFileSync(masterFile, randomBytes(MAX_READ_BYTES + 512 * 1024));

// Past MAX_COMMAND_TEXT and MAX_COLLECTED_STDOUT, each several times over.
const SAID = 4 * MAX_COMMAND_TEXT;
const WRITTEN = 2 * MAX_COLLECTED_STDOUT;

// Each `send-N` source makes the hostile worker send N bytes whatever it is told.
const limits = (worker: string) => `
  - name: limits-${worker}
    workers: [hostile-${worker}]
    steps:
      - { type: file_upload, name: capped, workersrc: send-20480, masterdest: capped.bin, maxsize: 1000, haltOnFailure: false }
      - { type: directory_upload, name: capped-dir, workersrc: send-20480, masterdest: capped-dir, maxsize: 1000, haltOnFailure: false }
      - { type: file_upload, name: defaulted, workersrc: send-20480, masterdest: defaulted.bin, haltOnFailure: false }
      - { type: file_upload, name: fits, workersrc: send-4000, masterdest: fits.bin }
      - { type: file_upload, name: fits-too, workersrc: send-4000, masterdest: fits-too.bin }
      - { type: file_upload, name: over-quota, workersrc: send-4000, masterdest: over-quota.bin }
      - { type: file_upload, name: after, workersrc: send-10, masterdest: after.bin }
  - name: said-${worker}
    workers: [hostile-${worker}]
    steps:
      - { type: file_upload, name: said, workersrc: say-${SAID}, masterdest: said.bin, haltOnFailure: false }
      - { type: multiple_file_upload, name: globbed, workersrcs: [stdout-${WRITTEN}], glob: true, masterdest: globbed }
`;

const CONFIG = `
log_compression: none
artifacts: { default_maxsize: 4096, build_quota: 10240 }
workers: [{ name: hostile-agent, password: pw }, { name: hostile-bbw, password: pw }]
builders:
${limits('agent')}
${limits('bbw')}
  - name: read-bbw
    workers: [hostile-bbw]
    steps:
      - { type: file_download, mastersrc: ${JSON.stringify(masterFile)}, workerdest: got.bin }
`;

let stage: Stage;
let agent: ReturnType<typeof hostileAgent>;
let bbw: ReturnType<typeof hostileBbw>;

beforeAll(async () => {
  stage = await Stage.open();
  const config = parseMasterConfig(CONFIG);
  await stage.master('m-agent', CONFIG, {
    listenForWorkers: (events) =>
      startWorkerServer({ host: '127.0.0.1', port: 0, config, masterName: 'm-agent', log, events }).then(
        (s) => {
          agent = hostileAgent({
            url: `ws://127.0.0.1:${s.port}/worker`,
            name: 'hostile-agent',
            password: 'pw',
            log,
          });
          return s;
        },
      ),
  });
  const port = await freePort();
  await stage.master('m-bbw', CONFIG, {
    listenForWorkers: (events) =>
      startMsgpackWorkerServer({
        host: '127.0.0.1',
        port,
        passwords: new Map([['hostile-bbw', 'pw']]),
        builderDirs: () => ['limits-bbw', 'read-bbw', 'said-bbw'],
        log,
        events,
      }).then((s) => {
        // Asks 8e9 bytes in one read, as the review's worker did.
        bbw = hostileBbw({ port, name: 'hostile-bbw', password: 'pw', basedir: '/hostile', readLength: 8e9 });
        return s;
      }),
  });
}, 120_000);

afterAll(async () => {
  await agent?.close();
  bbw?.close();
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

const stored = (buildid: number) =>
  stage.db.pool.query(sql`
    SELECT name, length::int AS length, complete FROM flotilla.artifacts WHERE buildid = ${buildid} ORDER BY id`);

describe.each(['agent', 'bbw'])('a worker (%s) that sends past its limits', (worker) => {
  it('is cut at maxsize, the default and the quota; the steps fail, keep nothing, and fail the build', async () => {
    const { build, ran } = await ranBuild(stage, `limits-${worker}`);
    // over-quota halts the build (transfer steps haltOnFailure by default): `after` never runs.
    expect(ran.map((s) => [s.name, s.results])).toEqual([
      ['capped', Results.FAILURE],
      ['capped-dir', Results.FAILURE],
      ['defaulted', Results.FAILURE],
      ['fits', Results.SUCCESS],
      ['fits-too', Results.SUCCESS],
      ['over-quota', Results.FAILURE],
    ]);
    expect(build.results).toBe(Results.FAILURE);

    const stopped = /Upload stopped by the master past (\d+) bytes: (.*)\. Nothing of it was kept\./;
    const says = async (step: string) => stopped.exec((await logs(stage, build.id, step)).stdio ?? '');
    expect((await says('capped'))?.slice(1)).toEqual(['1000', "the step's maxsize is 1000 bytes"]);
    expect((await says('capped-dir'))?.[1]).toBe('1000');
    expect((await says('defaulted'))?.slice(1)).toEqual([
      '4096',
      'the step sets no maxsize, and artifacts.default_maxsize is 4096 bytes',
    ]);
    // 8000 of the quota's 10240 bytes are taken by the two that fit: 2240 left.
    expect((await says('over-quota'))?.slice(1)).toEqual([
      '2240',
      "the build's artifacts may take 10240 bytes (artifacts.build_quota), and 8000 are taken",
    ]);

    // The worker was told each limit as its maxsize, as Buildbot's master tells it.
    const told =
      worker === 'agent'
        ? agent.asked.map((r) => r.maxsize)
        : bbw.asked.filter((c) => c.name.startsWith('upload_')).map((c) => c.args.maxsize);
    expect(told.slice(-6)).toEqual([1000, 1000, 4096, 4096, 4096, 2240]);

    // Only what fitted is kept, whole; no large object is left without its artifact.
    expect(await stored(build.id)).toEqual([
      { name: 'fits.bin', length: 4000, complete: true },
      { name: 'fits-too.bin', length: 4000, complete: true },
    ]);
    const orphans = await stage.db.pool.query(
      sql`SELECT count(*)::int AS n FROM pg_largeobject_metadata m WHERE NOT EXISTS (SELECT 1 FROM flotilla.artifacts a WHERE a.object = m.oid)`,
    );
    expect(orphans[0].n).toBe(0);
  }, 120_000);
});

describe.each(['agent', 'bbw'])('a worker (%s) that says more than it is asked', (worker) => {
  it('is cut: a transfer keeps the start of its text, a glob past its bound fails the step', async () => {
    const { build, ran } = await ranBuild(stage, `said-${worker}`);
    expect(ran.map((s) => [s.name, s.results])).toEqual([
      ['said', Results.SUCCESS],
      ['globbed', Results.FAILURE],
    ]);
    expect(build.results).toBe(Results.FAILURE);

    // The transfer's text: its first MAX_COMMAND_TEXT characters, then a line saying how
    // many more the master dropped.
    const said = (await logs(stage, build.id, 'said')).stdio ?? '';
    expect(said).toContain(
      `[the worker said ${SAID - MAX_COMMAND_TEXT} more characters; the master kept the first ${MAX_COMMAND_TEXT}]`,
    );

    // The glob's matches: none kept, the step fails saying why, and nothing is uploaded.
    const globbed = (await logs(stage, build.id, 'globbed')).stdio ?? '';
    expect(globbed).toContain(`stdout of sh not kept: over ${MAX_COLLECTED_STDOUT} bytes; the step fails`);
    expect(await stored(build.id)).toEqual([{ name: 'said.bin', length: 0, complete: true }]);
  }, 120_000);
});

describe('a download from a buildbot-worker that asks for 8e9 bytes in one read', () => {
  it('is answered at most MAX_READ_BYTES', async () => {
    const { build, ran } = await ranBuild(stage, 'read-bbw');
    expect(ran.map((s) => [s.name, s.results])).toEqual([['download', Results.SUCCESS]]);
    expect(build.results).toBe(Results.SUCCESS);
    expect(bbw.asked.find((c) => c.name === 'download_file')).toBeDefined();
    expect(bbw.reads).toEqual([MAX_READ_BYTES]);
  }, 120_000);

  it('a length that is not a whole number of bytes is a malformed frame (the server closes the link for it)', () => {
    const read = (length: unknown) =>
      parseWorkerFrame(encodeFrame({ op: 'update_read_file', seq_number: 1, command_id: 'c', length }));
    expect(read(1024)).toMatchObject({ length: 1024 });
    for (const bad of [-1, 1.5, 2 ** 53, '8', null]) expect(read(bad)).toBeNull();
  });
});
