// Secrets kept out of everything a build stores (issue 28, items 3 to 5 and the state
// string), in real builds on a real Flotilla agent and on a real buildbot-worker 3.7 (over
// msgpack), whose headers echo the command in encodings of their own: a 4-line key in the
// echoed command, the `argv:` header, the environment header and the output; secrets holding
// `'` and `\` in the `argv:` header (Python's repr of bytes, in both of its quotings); a
// multi-word secret in the state string; a set_property value, a step link's name and URL,
// and the name of an artifact a glob upload stored (a file the build named after a secret).
// Each secret is checked by marks of its own that any form of it would show (the repr and
// shell forms only escape `'` and `\`): none is in any log, state string, link, property or
// artifact name of the build.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { Stage } from '../in-process.js';
import { finishedBuild, logs, property, request, steps } from './lib.js';
import { type RealWorkers, startRealWorkers } from './real-workers.js';

const root = mkdtempSync(join(tmpdir(), 'flotilla-redaction-'));
const secretsDir = join(root, 'secrets');

const SECRETS: Record<string, { value: string; marks: string[] }> = {
  pem: {
    value: [
      '-----BEGIN TEST KEY-----',
      'MIIBOgIBAAJBAKj34GkxFhD90vcN',
      'LYLInFEX6Ppy1tPf9Cnzj4p4WGeK',
      '-----END TEST KEY-----',
    ].join('\n'),
    marks: ['TEST KEY', 'MIIBOg', 'LYLInF'],
  },
  // Python's repr puts a word holding ' and no " in double quotes, ' left alone...
  q1: { value: `Qx9'zz\\Vq7`, marks: ['Qx9', 'Vq7'] },
  // ...and one holding both in single quotes, ' escaped.
  q2: { value: `Rw8'yy"\\Up6`, marks: ['Rw8', 'Up6'] },
  words: { value: 'correct horse battery staple', marks: ['correct', 'horse', 'battery', 'staple'] },
  token: { value: 'tok3n-Zz9', marks: ['tok3n', 'Zz9'] },
};
mkdirSync(secretsDir, { recursive: true });
for (const [name, { value }] of Object.entries(SECRETS)) {
  writeFileSync(join(secretsDir, name), `${value}\n`);
  chmodSync(join(secretsDir, name), 0o600);
}

const builder = (worker: string) => `
  - name: redact-${worker}
    workers: [${worker}]
    steps:
      - type: shell
        name: pem-list
        command: ["printf", "%s\\n", "%(secret:pem)s"]
        env: { KEY: "%(secret:pem)s" }
      - { type: shell, name: pem-string, command: "printf '%s\\n' '%(secret:pem)s'" }
      - { type: shell, name: quotes, command: ["echo", "%(secret:q1)s", "%(secret:q2)s"] }
      - { type: shell, name: words, command: "echo %(secret:words)s" }
      - { type: set_property, name: prop, property: leaked, command: ["printf", "%s", "x-%(secret:q1)s"] }
      - type: shell
        name: linked
        command: "mkdir -p out && touch out/%(secret:token)s.txt"
        urls: [{ name: "see %(secret:token)s", url: "https://example.test/%(secret:token)s" }]
      - { type: multiple_file_upload, name: glob, workersrcs: ["out/*.txt"], glob: true, masterdest: globbed }
`;

const CONFIG = `
log_compression: none
buildbotURL: http://ci.example.test
secrets: [{ type: directory, dirname: ${JSON.stringify(secretsDir)} }]
workers: [{ name: agent, password: pw }, { name: bbw, password: pw }]
builders:
${builder('agent')}
${builder('bbw')}
`;

let stage: Stage;
let workers: RealWorkers;

beforeAll(async () => {
  stage = await Stage.open();
  workers = await startRealWorkers(stage, CONFIG, root, ['redact-bbw']);
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  await stage?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every text the build stored, each with where it is. */
async function storedTexts(buildid: number): Promise<[string, string][]> {
  const q = (s: ReturnType<typeof sql>) => stage.db.pool.query(s) as Promise<{ at: string; text: string }[]>;
  const rows = [
    ...(await q(sql`
      SELECT 'log ' || s.name || '/' || l.name AS at, convert_from(c.content, 'UTF8') AS text
      FROM logs l JOIN steps s ON s.id = l.stepid JOIN logchunks c ON c.logid = l.id
      WHERE s.buildid = ${buildid}`)),
    ...(await q(sql`
      SELECT 'step ' || name AS at, state_string || ' ' || urls_json AS text FROM steps WHERE buildid = ${buildid}`)),
    ...(await q(sql`SELECT 'build' AS at, state_string AS text FROM builds WHERE id = ${buildid}`)),
    ...(await q(sql`
      SELECT 'property ' || name AS at, value AS text FROM build_properties WHERE buildid = ${buildid}`)),
    ...(await q(
      sql`SELECT 'artifact' AS at, name AS text FROM flotilla.artifacts WHERE buildid = ${buildid}`,
    )),
  ];
  return rows.map((r) => [r.at, r.text]);
}

describe.each(['agent', 'bbw'])('secrets on %s', (worker) => {
  let buildid: number;
  beforeAll(async () => {
    const { brid } = await request(stage, `redact-${worker}`);
    const build = await finishedBuild(stage, brid, 90_000);
    expect(build.results).toBe(Results.SUCCESS);
    buildid = build.id;
  }, 120_000);

  it('show in no form in anything the build stored', async () => {
    const texts = await storedTexts(buildid);
    expect(texts.length).toBeGreaterThan(10);
    const leaks = texts.flatMap(([at, text]) =>
      Object.entries(SECRETS).flatMap(([name, { marks }]) =>
        marks.filter((m) => text.includes(m)).map((m) => `${name} (${m}) in ${at}`),
      ),
    );
    expect(leaks).toEqual([]);
  });

  it('a key of several lines: the echoed command, the argv and environment headers, the output', async () => {
    for (const step of ['pem-list', 'pem-string']) {
      const lines = (await logs(stage, buildid, step)).stdio!.split('\n');
      // The command as the worker echoes it: the header's lines before ` in dir`, one for
      // each line of the key (after the command's own first line).
      const echoed = lines.slice(
        0,
        lines.findIndex((l) => l.startsWith('h in dir')),
      );
      expect(echoed[0]).toMatch(/^hprintf '?%s/);
      expect(echoed.slice(1).map((l) => l.includes('<pem>'))).toEqual([true, true, true, true]);
      // The argv header: the key on one line, its newlines escaped as Python's repr does.
      expect(lines.find((l) => l.startsWith('h argv:'))).toMatch(/'<pem>\\?'/);
      expect(lines.filter((l) => l === 'o<pem>')).toHaveLength(4);
    }
    const list = (await logs(stage, buildid, 'pem-list')).stdio!;
    expect(list).toContain('h  KEY=<pem>\nh<pem>\nh<pem>\nh<pem>\n');
  });

  it("secrets holding ' and \\: the argv header", async () => {
    const stdio = (await logs(stage, buildid, 'quotes')).stdio!;
    const argv = stdio.split('\n').find((l) => l.startsWith('h argv:'));
    expect(argv).toMatch(/<q1>.*<q2>/);
    expect(stdio).toContain('o<q1> <q2>\n');
  });

  it('a secret of several words: the state string shows none of them', async () => {
    const step = (await steps(stage, buildid)).find((s) => s.name === 'words')!;
    expect(step.state_string).toBe("'echo <words>'");
  });

  it('a property set from output, a link, and an artifact named after a secret are stored redacted', async () => {
    expect(await property(stage, buildid, 'leaked')).toBe('x-<q1>');
    const all = await steps(stage, buildid);
    const linked = all.find((s) => s.name === 'linked')!;
    expect(JSON.parse(linked.urls_json)).toEqual([
      { name: 'see <token>', url: 'https://example.test/<token>' },
    ]);
    const names = await stage.db.pool.query(
      sql`SELECT name FROM flotilla.artifacts WHERE buildid = ${buildid} ORDER BY id`,
    );
    expect(names.map((r) => r.name)).toEqual(['globbed/<token>.txt']);
    const glob = all.find((s) => s.name === 'glob')!;
    expect(JSON.parse(glob.urls_json)).toEqual([{ name: '<token>.txt', url: expect.any(String) }]);
  });
});
