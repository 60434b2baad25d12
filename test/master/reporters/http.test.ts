// The generic HTTP reporter end to end (Buildbot's HttpStatusPush): by default a JSON POST of
// the build's data at its start and its end to the configured URL, with the configured
// headers, HTTP Basic credentials, and (ours) an HMAC-SHA256 signature of the body that the
// receiver on 127.0.0.1 checks with the shared secret. Generators choose what is reported:
// here a second reporter reports only failing builds of one builder, with a template.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forge, type Received } from '../../helpers/forge.js';
import { waitFor } from '../../helpers/wait.js';
import { ScriptedWorker, Stage } from '../in-process.js';
import { BUILDERS, requestBuild } from './builds.js';

const SECRET = 'shared-secret';

function signed(r: Omit<Received, 'status' | 'problems'>): string[] {
  const problems: string[] = [];
  if (r.method !== 'POST') problems.push(`method ${r.method}`);
  if (!String(r.headers['content-type']).startsWith('application/json')) problems.push('not JSON');
  if (r.body === undefined) problems.push('body is not JSON');
  if (r.url === '/all') {
    const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(r.raw).digest('hex')}`);
    const got = Buffer.from(String(r.headers['x-flotilla-signature-256'] ?? ''));
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) problems.push('bad signature');
    if (r.headers.authorization !== `Basic ${Buffer.from('ci:pw').toString('base64')}`)
      problems.push('no credentials');
    if (r.headers['x-team'] !== 'platform') problems.push('no configured header');
  }
  return problems;
}

let stage: Stage;
let forge: Forge;
beforeAll(async () => {
  [stage, forge] = await Promise.all([Stage.open(), Forge.start(signed, () => ({}))]);
}, 60_000);
afterAll(async () => {
  await stage?.close();
  await forge?.close();
});

const PROPERTIES = {};

const config = () => `${BUILDERS}
reporters:
  - type: http
    serverUrl: ${forge.url}/all
    headers: { X-Team: platform }
    auth: { user: ci, password: pw }
    hmac_secret: ${SECRET}
  - type: http
    name: failures
    serverUrl: ${forge.url}/failures
    generators:
      - type: build_status
        mode: failing
        builders: [broken]
        message_formatter:
          type: renderable
          template: "%(prop:buildername)s #%(prop:buildnumber)s failed"
`;

const request = async (builder: 'app' | 'broken') => {
  await requestBuild(stage, builder, {}, PROPERTIES);
};

describe('HTTP status push', () => {
  it("posts each build's data, signed, at its start and end; generators filter", async () => {
    const m = await stage.master('http-a', config(), { timing: { reportBackoffMs: 50 } });
    m.workers.connect(new ScriptedWorker('w1'));
    await request('app');
    await request('broken');
    const at = (path: string) => forge.received.filter((r) => r.url === path);
    await waitFor('four builds reported', () => at('/all').filter((r) => r.status === 201).length === 4);
    await waitFor('the failure reported', () => at('/failures').length === 1);
    expect(forge.received.filter((r) => r.status !== 201)).toEqual([]);

    const builds = at('/all').map((r) => r.body as Record<string, unknown>);
    const ofBuilder = (name: string) =>
      builds.filter((b) => (b.builder as { name: string }).name === name).map((b) => [b.complete, b.results]);
    expect(ofBuilder('app')).toEqual([
      [false, null],
      [true, 0],
    ]);
    expect(ofBuilder('broken')).toEqual([
      [false, null],
      [true, 2],
    ]);
    const end = builds.find((b) => b.complete && (b.builder as { name: string }).name === 'app')!;
    expect(end).toMatchObject({
      url: expect.stringMatching(/^http:\/\/flotilla\.test\/#\/builders\/\d+\/builds\/1$/),
      properties: { buildername: ['app', 'Builder'] },
      buildset: { sourcestamps: [{ branch: 'main', revision: 'abc', repository: 'r' }] },
    });
    expect(at('/failures')[0]!.body).toBe('broken #1 failed');
    await m.stop();
  });
});
