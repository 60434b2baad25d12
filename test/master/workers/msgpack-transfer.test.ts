// The runner's file transfers (WorkerConnection upload, uploadDirectory, download) with a
// real buildbot-worker 3.7 over msgpack_experimental_v7: the same results, with Buildbot's
// own worker commands, as test/worker/transfer.test.ts checks on a Flotilla agent.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import type { MsgpackWorkerConnection } from '../../../services/master/workers/msgpack/connection.js';
import {
  type MsgpackWorkerServer,
  startMsgpackWorkerServer,
} from '../../../services/master/workers/msgpack/server.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../helpers/buildbot-worker.js';
import type { Running } from '../../helpers/processes.js';
import { collector, reader } from '../../helpers/transfer-ends.js';
import { waitFor } from '../../helpers/wait.js';

const log = createLogger('test', 'silent');
const dir = mkdtempSync(join(tmpdir(), 'flotilla-bbw-transfer-'));
const base = join(dir, 'worker');
let server: MsgpackWorkerServer;
let worker: Running;
let conn: MsgpackWorkerConnection;

beforeAll(async () => {
  server = await startMsgpackWorkerServer({
    host: '127.0.0.1',
    port: 0,
    passwords: new Map([['bbw', 'secret']]),
    builderDirs: () => ['b'],
    log,
    events: {},
  });
  createBuildbotWorker({ dir: base, port: server.port, name: 'bbw', password: 'secret' });
  worker = startBuildbotWorker(base);
  await waitFor('the buildbot-worker to attach', async () => server.get('bbw') !== undefined, {
    timeoutMs: 30_000,
    proc: worker,
  });
  conn = server.get('bbw')!;
});
afterAll(async () => {
  await worker?.stop();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('transfers with buildbot-worker', () => {
  it('upload: a file in blocks; a missing file and maxsize end rc 1 with its words', async () => {
    mkdirSync(join(base, 'b', 'build'), { recursive: true });
    const data = randomBytes(600 * 1024 + 3);
    writeFileSync(join(base, 'b', 'build', 'out.bin'), data);
    const c = collector();
    expect(await conn.upload({ path: 'b/build/out.bin', blocksize: 64 * 1024 }, c.write)).toMatchObject({
      rc: 0,
    });
    expect(c.bytes().equals(data)).toBe(true);
    expect(await conn.upload({ path: 'b/build/nothing' }, collector().write)).toMatchObject({
      rc: 1,
      text: expect.stringMatching(/Cannot open file '.*nothing' for upload/),
    });
    const t = collector();
    writeFileSync(join(base, 'b', 'build', 'big.txt'), 'x'.repeat(5000));
    expect(
      await conn.upload({ path: 'b/build/big.txt', maxsize: 1000, blocksize: 300 }, t.write),
    ).toMatchObject({
      rc: 1,
      text: expect.stringMatching(/Maximum filesize reached, truncating file/),
    });
    expect(t.bytes().length).toBeLessThanOrEqual(1000);
  });

  it('uploadDirectory: a tar archive of the directory', async () => {
    mkdirSync(join(base, 'b', 'build', 'dist', 'sub'), { recursive: true });
    writeFileSync(join(base, 'b', 'build', 'dist', 'a.txt'), 'a');
    writeFileSync(join(base, 'b', 'build', 'dist', 'sub', 'b.txt'), 'b');
    const c = collector();
    expect(await conn.uploadDirectory({ path: 'b/build/dist', compress: 'gz' }, c.write)).toMatchObject({
      rc: 0,
    });
    const listing = execFileSync('tar', ['-t', '-z', '-f', '-'], { input: c.bytes() }).toString();
    expect(listing).toMatch(/a\.txt/);
    expect(listing).toMatch(/sub\/b\.txt/);
  });

  it('download: a file written with its mode; past maxsize truncated, rc 1', async () => {
    const data = randomBytes(700 * 1024);
    expect(await conn.download({ path: 'b/build/new/in.bin', mode: 0o750 }, reader(data))).toMatchObject({
      rc: 0,
    });
    const path = join(base, 'b', 'build', 'new', 'in.bin');
    expect(readFileSync(path).equals(data)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o750);
    expect(
      await conn.download(
        { path: 'b/build/small.txt', maxsize: 10, blocksize: 4 },
        reader(Buffer.from('0123456789abcdef')),
      ),
    ).toMatchObject({ rc: 1, text: expect.stringMatching(/Maximum filesize reached/) });
    expect(readFileSync(join(base, 'b', 'build', 'small.txt'), 'utf8')).toBe('0123456789');
  });
});
