// What `npm start`'s example reports to (deploy/example/master.yaml's reporters): a stand-in
// for a forge on 127.0.0.1, so the reports can be seen without a GitHub account.
// - GitHub's commit status API, the part GitHubStatusPush uses: POST
//   /repos/{owner}/{repo}/statuses/{sha} records a status; GET
//   /repos/{owner}/{repo}/commits/{sha}/statuses lists a commit's, newest first, as GitHub does.
// - A generic receiver for HttpStatusPush: POST /builds records the body when its
//   X-Flotilla-Signature-256 matches REPORT_HMAC_SECRET; GET /builds lists what came,
//   newest first, as {builder, number, complete, results, url}.
// Everything is kept in memory (the last 1,000 of each) and answered as JSON only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 8083);
const token = process.env.REPORT_TOKEN ?? '';
const secret = process.env.REPORT_HMAC_SECRET ?? '';
const KEEP = 1000;
const STATUS = /^\/repos\/([^/]+)\/([^/]+)\/statuses\/([0-9a-f]{4,64})$/;
const LIST = /^\/repos\/([^/]+)\/([^/]+)\/commits\/([0-9a-f]{4,64})\/statuses$/;

const statuses = new Map<string, Record<string, unknown>[]>();
const builds: Record<string, unknown>[] = [];
let nextId = 1;

function keep<T>(list: T[], item: T): void {
  list.unshift(item);
  list.length = Math.min(list.length, KEEP);
}

function signed(body: string, header: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const got = Buffer.from(header ?? '');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

const server = createServer((req, res) => {
  const reply = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body, null, 2));
  };
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= 1 << 20) chunks.push(c);
  });
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0]!;
    const raw = Buffer.concat(chunks).toString('utf8');
    if (size > 1 << 20) return reply(413, { message: 'too large' });
    let body: Record<string, unknown> | null = null;
    try {
      const parsed = raw ? JSON.parse(raw) : null;
      body = typeof parsed === 'object' && parsed !== null ? parsed : null;
    } catch {
      // Not JSON: refused below.
    }
    const status = STATUS.exec(path);
    const list = LIST.exec(path);
    if (req.method === 'POST' && status) {
      if (req.headers.authorization !== `token ${token}`) return reply(401, { message: 'Bad credentials' });
      if (!body || !['error', 'failure', 'pending', 'success'].includes(body.state as string))
        return reply(422, { message: 'Validation Failed' });
      const [, owner, repo, sha] = status;
      const key = `${owner}/${repo}@${sha}`;
      const s = {
        id: nextId++,
        state: body.state,
        description: body.description ?? null,
        target_url: body.target_url ?? null,
        context: body.context ?? 'default',
        created_at: new Date().toISOString(),
      };
      keep(statuses.get(key) ?? (statuses.set(key, []).get(key) as Record<string, unknown>[]), s);
      return reply(201, s);
    }
    if (req.method === 'GET' && list) {
      const [, owner, repo, sha] = list;
      return reply(200, statuses.get(`${owner}/${repo}@${sha}`) ?? []);
    }
    if (path === '/builds' && req.method === 'POST') {
      if (!body || !signed(raw, req.headers['x-flotilla-signature-256'] as string | undefined))
        return reply(401, { message: 'bad signature' });
      const builder = body.builder as { name?: unknown } | undefined;
      keep(builds, {
        received_at: new Date().toISOString(),
        builder: builder?.name ?? null,
        number: body.number ?? null,
        complete: body.complete ?? null,
        results: body.results ?? null,
        url: body.url ?? null,
      });
      return reply(200, {});
    }
    if (path === '/builds' && req.method === 'GET') return reply(200, builds);
    return reply(404, { message: 'Not Found' });
  });
});

server.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'report receiver listening', port }));
});
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => server.close(() => process.exit(0)));
