// The four log differences issue 30 found between Buildbot 3.7 and Flotilla (section 3), each
// checked on a real buildbot-worker 3.7 (msgpack) and on a real Flotilla agent, the same
// builder on each: a shell step's `program finished with exit code N` comes before the
// worker's `elapsedTime=` (Buildbot's master writes it when the rc arrives); set_property adds
// a `property changes` log; a logfile's log is a stream log ('s'); a transfer step's stdio
// has the rc line (after buildbot-worker's `sending PATH` header), on an upload and a download.
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { logs, ranBuild } from './lib.js';
import { realWorkersSuite } from './real-workers.js';

const builder = (worker: string) => `
  - name: shape-${worker}
    workers: [${worker}]
    steps:
      - { type: shell, name: ok, command: "echo hi > report.txt; echo done" }
      - { type: shell, name: fails, command: "exit 3", haltOnFailure: false, flunkOnFailure: false }
      - { type: shell, name: logged, command: "echo one > a.log; echo two >> a.log", logfiles: { a: a.log, page.html: a.log } }
      - { type: set_property, name: prop, command: 'echo "it''s 1"', property: answer, strip: false }
      - { type: file_upload, workersrc: report.txt, masterdest: report.txt }
      - { type: string_download, s: "x", workerdest: x.txt }
`;

const CONFIG = `
log_compression: none
workers: [{ name: agent, password: pw }, { name: bbw, password: pw }]
builders:
${builder('agent')}
${builder('bbw')}
`;

const suite = realWorkersSuite('flotilla-log-shape-', CONFIG, ['shape-bbw']);

describe.each(['agent', 'bbw'])('logs as Buildbot 3.7 writes them, on %s', (worker) => {
  let build: { id: number; results: number | null };
  beforeAll(async () => {
    ({ build } = await ranBuild(suite.stage, `shape-${worker}`));
  }, 120_000);

  it('ends a shell step with the rc line, then elapsedTime', async () => {
    expect(build.results).toBe(Results.SUCCESS);
    for (const [step, rc] of [
      ['ok', 0],
      ['fails', 3],
    ] as const) {
      const tail = (await logs(suite.stage, build.id, step)).stdio!.split('\n').slice(-2);
      expect(tail[0]).toBe(`hprogram finished with exit code ${rc}`);
      expect(tail[1]).toMatch(/^helapsedTime=[0-9.]+$/);
    }
  });

  it('gives set_property a property changes log of repr(value)', async () => {
    const l = await logs(suite.stage, build.id, 'prop');
    expect(Object.keys(l)).toEqual(['stdio', 'property changes']);
    expect(l['property changes']).toBe(`answer: "it's 1\\n"`);
  });

  it("makes every logfile's log a stream log, an .html name too", async () => {
    const rows = await suite.stage.db.pool.query(sql`
      SELECT l.name, l.type FROM logs l JOIN steps s ON s.id = l.stepid
      WHERE s.buildid = ${build.id} AND s.name = 'logged' ORDER BY l.id`);
    expect(rows.map((r) => [r.name, r.type])).toEqual([
      ['stdio', 's'],
      ['a', 's'],
      ['page.html', 's'],
    ]);
    expect((await logs(suite.stage, build.id, 'logged')).a).toBe('oone\notwo');
  });

  it("writes the rc line into a transfer step's stdio", async () => {
    // buildbot-worker says what it sends first; Flotilla's agent says nothing of its own.
    const sending = worker === 'bbw' ? [expect.stringMatching(/^hsending \/.*report\.txt$/)] : [];
    expect((await logs(suite.stage, build.id, 'upload')).stdio!.split('\n')).toEqual([
      ...sending,
      'hprogram finished with exit code 0',
    ]);
    expect((await logs(suite.stage, build.id, 'string_download')).stdio).toBe(
      'hprogram finished with exit code 0',
    );
  });
});
