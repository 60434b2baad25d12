// Differential conformance: ask a real Buildbot 3.7 and Flotilla the same requests on the same
// rows and report every answer that the compatibility rules do not explain. The golden cases
// (test/fixtures/buildbot-3.7/cases.json) are a sample; this asks every path form and parameter of the registry.
//
//   sudo test/conformance/differential/buildbot.sh start   # Buildbot on the fixture, :8020
//   DATABASE_URL=postgresql://flotilla:flotilla@127.0.0.1:55420/buildbot npm run migrate
//   (start an API on that same database, e.g. PORT=8021 MASTER_CONFIG=test/conformance/oracle-master.yaml)
//   node --import tsx test/conformance/differential/run.ts \
//     --buildbot http://127.0.0.1:8020/api/v2 --flotilla http://127.0.0.1:8021/api/v2 [--only builds] [--record FILE]
//
// Both servers read one database, so nothing differs but the servers. --record writes the
// agreeing answers (status, type, disposition and a digest of the body; recorded.ts), one a
// line, for npm test to ask again without a Buildbot (replay.test.ts).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildRegistry } from '../../../services/api/registry/index.js';
import { discover } from './bindings.js';
import { HEADER_REQUESTS } from './headers.js';
import { type Answer, canon, judge, judgePost, withoutPaging } from './judge.js';
import { explain } from './known.js';
import { generatePosts } from './posts.js';
import { digestOf, type Recorded } from './recorded.js';
import { EDGE_REQUESTS, generate } from './requests.js';

const { values: opts } = parseArgs({
  options: {
    buildbot: { type: 'string', default: 'http://127.0.0.1:8020/api/v2' },
    flotilla: { type: 'string', default: 'http://127.0.0.1:8021/api/v2' },
    only: { type: 'string' },
    record: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});

async function ask(
  base: string,
  path: string,
  plain = false,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const origin = new URL(base).origin;
  const headers = init.headers ?? (plain ? {} : { Accept: 'application/json' });
  const res = await fetch(`${base}${path ? `/${path}` : ''}`, {
    method: init.method ?? 'GET',
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('{self}', origin)])),
    // A Buffer body adds no Content-Type of its own.
    body: init.body === undefined ? undefined : Buffer.from(init.body, 'utf8'),
    redirect: 'manual',
    signal: AbortSignal.timeout(60_000),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    disposition: res.headers.get('content-disposition'),
    cors: [
      'access-control-allow-origin',
      'access-control-allow-headers',
      'access-control-allow-methods',
      'access-control-max-age',
    ]
      .map((h) => `${h}: ${res.headers.get(h)?.replace(origin, '{self}') ?? ''}`)
      .join('; '),
    text: await res.text(),
  };
}

const bbCache = new Map<string, Answer>();
async function askBuildbot(path: string, plain = false): Promise<Answer> {
  const k = `${plain}|${path}`;
  let a = bbCache.get(k);
  if (!a) {
    a = await ask(opts.buildbot!, path, plain);
    bbCache.set(k, a);
  }
  return a;
}

const registry = buildRegistry([]);
const bindings = await discover(opts.buildbot!);
const fetchRows = async (path: string) => {
  const a = await askBuildbot(path);
  if (a.status !== 200) return [];
  const body = JSON.parse(a.text) as Record<string, unknown>;
  const key = Object.keys(body).find((k) => k !== 'meta');
  return key && Array.isArray(body[key]) ? (body[key] as Record<string, unknown>[]) : [];
};
let requests = [...(await generate(registry.endpoints, bindings, fetchRows)), ...EDGE_REQUESTS];
if (opts.only) {
  const only = opts.only.split(',');
  requests = requests.filter((r) => only.some((o) => r.endpoint.startsWith(o)));
}
process.stderr.write(`${requests.length} requests\n`);

/** An agreed answer, for npm test to replay without a Buildbot (replay.test.ts). */
function asCase(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
  fl: Answer,
): Recorded {
  return {
    method,
    path,
    headers,
    ...(body === undefined ? {} : { body }),
    status: fl.status,
    type: fl.type,
    ...(fl.disposition ? { disposition: fl.disposition } : {}),
    digest: digestOf(path, fl),
  };
}

/** The endpoint a path of EDGE_REQUESTS matches (any collection, for the judge's rules). */
function guess(path: string) {
  const segments = path
    .split('?')[0]!
    .split('/')
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  return (
    registry.matcher.match(segments)?.endpoint ?? registry.endpoints.find((e) => e.pattern === 'builds')!
  );
}

const failures = new Map<string, string[]>();
const explained = new Map<string, number>();
const recorded: Recorded[] = [];
let passed = 0;
let n = 0;
for (const r of requests) {
  n++;
  if (n % 500 === 0) process.stderr.write(`${n}...\n`);
  const endpoint = registry.endpoints.find((e) => e.pattern === r.endpoint) ?? guess(r.path);
  const [bb, fl] = [await askBuildbot(r.path, r.plain), await ask(opts.flotilla!, r.path, r.plain)];
  const paged = /[?&](limit|offset)=/.test(r.path);
  const unpaged = paged && bb.status === 200 ? await askBuildbot(withoutPaging(r.path), r.plain) : undefined;
  let diff = judge(bb, fl, {
    path: r.path,
    collection: endpoint.collection,
    defaultOrder: endpoint.resource.defaultOrder ?? [endpoint.resource.key],
    unpaged,
  });
  if (
    !diff &&
    r.plain &&
    bb.status === 200 &&
    !bb.text.includes('last_active') &&
    !/[?&]order=/.test(r.path)
  ) {
    // The indented text/plain form must match byte for byte (where the order is Buildbot's).
    const same = (() => {
      try {
        return canon(JSON.parse(bb.text)) === canon(JSON.parse(fl.text));
      } catch {
        return false;
      }
    })();
    if (same && bb.text !== fl.text) diff = 'text/plain formatting differs';
  }
  const why = diff ? explain({ method: 'GET', path: r.path }, bb, fl) : null;
  if (why) explained.set(why, (explained.get(why) ?? 0) + 1);
  else if (diff) {
    const k = `${r.endpoint}`;
    failures.set(k, [...(failures.get(k) ?? []), `${r.plain ? '[plain] ' : ''}/${r.path}: ${diff}`]);
  } else {
    passed++;
    if (opts.record)
      recorded.push(asCase('GET', r.path, r.plain ? {} : { Accept: 'application/json' }, undefined, fl));
  }
}

for (const p of [...generatePosts(registry.endpoints, bindings), ...HEADER_REQUESTS]) {
  if (opts.only && !opts.only.split(',').some((o) => p.endpoint.startsWith(o))) continue;
  const bb = await ask(opts.buildbot!, p.path, false, p);
  const fl = await ask(opts.flotilla!, p.path, false, p);
  const diff = judgePost(bb, fl, p.path, p.method);
  const k = `${p.method} ${p.endpoint}`;
  const why = diff ? explain(p, bb, fl) : null;
  if (why) explained.set(why, (explained.get(why) ?? 0) + 1);
  else if (diff)
    failures.set(k, [
      ...(failures.get(k) ?? []),
      `${p.method} /${p.path} ${JSON.stringify(p.headers)} ${p.body ?? ''}: ${diff}`,
    ]);
  else {
    passed++;
    if (opts.record) recorded.push(asCase(p.method, p.path, p.headers, p.body, fl));
  }
}

for (const [endpoint, list] of failures) {
  console.log(`\n## ${endpoint || '(root)'} (${list.length})`);
  for (const l of opts.verbose ? list : list.slice(0, 12)) console.log(`  ${l}`);
  if (!opts.verbose && list.length > 12) console.log(`  ... ${list.length - 12} more`);
}
const failed = [...failures.values()].reduce((s, l) => s + l.length, 0);
console.log('\nExplained differences (docs/compatibility.md):');
for (const [why, count] of explained) console.log(`  ${String(count).padStart(5)}  ${why}`);
const nExplained = [...explained.values()].reduce((s, n) => s + n, 0);
console.log(`\n${passed} agree, ${nExplained} differ as documented, ${failed} differ otherwise`);
if (opts.record) writeFileSync(opts.record, `${recorded.map((r) => JSON.stringify(r)).join('\n')}\n`);
process.exitCode = failed ? 1 : 0;
