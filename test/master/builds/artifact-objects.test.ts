// Artifacts through the object store in real builds (a real Flotilla agent and a real
// buildbot-worker 3.7, as test/master/builds/transfer.test.ts): masters configured with
// object_store move what a file_upload step completes (the step queues the move), and a later
// file_download step of the same build, run only once the move is recorded, sends the worker
// the bytes from the store, byte for byte.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { S3Server, TEST_S3_CREDENTIALS } from '../../helpers/s3-server.js';
import { waitFor } from '../../helpers/wait.js';
import { finishedBuild, request } from './lib.js';
import { realWorkersSuite } from './real-workers.js';

const BUCKET = 'builds';
// Started before the suite's configuration is written, which names its (free) port.
const s3 = await S3Server.start({ bucket: BUCKET });
// The key pair's files, and the files that let each build's wait step end.
const dir = mkdtempSync(join(tmpdir(), 'flotilla-artifact-objects-keys-'));
writeFileSync(join(dir, 'id'), TEST_S3_CREDENTIALS.accessKeyId, { mode: 0o600 });
writeFileSync(join(dir, 'secret'), TEST_S3_CREDENTIALS.secretAccessKey, { mode: 0o600 });

const builder = (worker: string) => `
  - name: obj-${worker}
    workers: [${worker}]
    steps:
      - { type: shell, name: make, command: "mkdir -p dist && head -c 200000 /dev/urandom > dist/a.bin" }
      - { type: file_upload, workersrc: dist/a.bin, masterdest: a.bin }
      - { type: shell, name: wait, command: "while [ ! -f ${join(dir, `go-${worker}`)} ]; do sleep 0.1; done" }
      - { type: file_download, artifact: a.bin, workerdest: back/a.bin }
`;

const suite = realWorkersSuite(
  'flotilla-artifact-objects-',
  `
log_compression: none
object_store:
  endpoint: ${s3.endpoint}
  bucket: ${BUCKET}
  access_key_id_file: ${join(dir, 'id')}
  secret_access_key_file: ${join(dir, 'secret')}
workers: [{ name: agent, password: pw }, { name: bbw, password: pw }]
builders:
${builder('agent')}
${builder('bbw')}
`,
  ['obj-bbw'],
);

afterAll(async () => {
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['agent', 'bbw'])('on %s', (worker) => {
  it('an uploaded artifact moves to the store, and a download sends it back from there', async () => {
    const { brid } = await request(suite.stage, `obj-${worker}`);
    const keyOf = async () => {
      const rows = (await suite.stage.db.pool.query(sql`
        SELECT a.object_key AS key FROM flotilla.artifacts a
        JOIN buildrequests r ON r.id = ${brid} JOIN builds b ON b.buildrequestid = r.id AND b.id = a.buildid
        WHERE a.name = 'a.bin'`)) as { key: string | null }[];
      return rows[0]?.key ?? null;
    };
    await waitFor('the artifact to move', async () => (await keyOf()) !== null, { timeoutMs: 90_000 });
    const key = (await keyOf())!;
    writeFileSync(join(dir, `go-${worker}`), '');
    const build = await finishedBuild(suite.stage, brid, 90_000);
    expect(build.results).toBe(Results.SUCCESS);
    const workdir = join(suite.root, worker, `obj-${worker}`, 'build');
    const sent = readFileSync(join(workdir, 'dist', 'a.bin'));
    expect(s3.objects.get(key)?.equals(sent)).toBe(true);
    expect(readFileSync(join(workdir, 'back', 'a.bin')).equals(sent)).toBe(true);
    expect(s3.requests.some((r) => r.method === 'GET' && r.key === key)).toBe(true);
    expect(s3.refused).toEqual([]);
  }, 120_000);
});
