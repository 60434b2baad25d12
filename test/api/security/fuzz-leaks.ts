// What no error answer may carry, for both fuzzers (fuzz.test.ts against a process,
// garbage.fuzz.test.ts in process): a stack frame, a source file, an internal path, a
// server-side error class, SQL, a PostgreSQL or Redis message, a connection string. Text
// the request itself sent does not count (an answer may quote what it refuses).
import type { FuzzRequest } from './fuzz-requests.js';

const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\bat (?:async )?[\w$.<>[\] ]+ \(?[^()\s]*:\d+:\d+\)?/],
  ['node_modules', /node_modules/],
  ['an internal path', /\/(?:work|srv|app|home|root|usr|opt|tmp|var)\/[\w.-]+\//],
  ['a source file', /\b[\w-]+\.(?:ts|mjs|cjs|js):\d+/],
  ['an error class', /\b(?:Type|Reference|Syntax|Range|Eval|URI|Aggregate|Database|Query|Reply)Error\b/],
  ['SQL', /\b(?:SELECT\s+[\w*]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|WHERE\s+\w+\s*=)/],
  [
    'a PostgreSQL message',
    /syntax error at or near|relation "|column "|violates|duplicate key|invalid input syntax|pg_catalog|PostgreSQL/i,
  ],
  ['a connection string', /postgres(?:ql)?:\/\/|redis:\/\//i],
  ['a Redis error', /ioredis|ECONNREFUSED|WRONGTYPE|NOSCRIPT/],
];

function requestText(req: FuzzRequest): string {
  if (req.kind === 'raw') return req.bytes.toString('latin1') + req.bytes.toString('utf8');
  if (req.kind === 'ws') return JSON.stringify(req.headers) + req.frames.map(String).join('');
  let decoded = req.path;
  try {
    decoded = decodeURIComponent(req.path);
  } catch {}
  return `${req.path} ${decoded} ${JSON.stringify(req.headers)} ${req.body?.toString('utf8') ?? ''} ${req.body?.toString('latin1') ?? ''}`;
}

/** What of LEAKS this answer's body shows that its request did not send, each described. */
export function leaksIn(req: FuzzRequest, status: number, body: string): string[] {
  const sent = requestText(req);
  const found: string[] = [];
  for (const [what, re] of LEAKS) {
    const m = re.exec(body);
    if (m && !sent.includes(m[0]))
      found.push(`${what} in a ${status}: ${JSON.stringify(m[0])} in ${body.slice(0, 200)}`);
  }
  return found;
}
