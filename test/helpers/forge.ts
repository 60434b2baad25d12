// A forge on 127.0.0.1 for the reporters' tests: an HTTP server that records every request
// and answers as the forge would. Each test gives it the forge's documented request shape
// (a function that lists what is wrong with a request); a request with a problem gets the
// forge's 422 with the problems, so a test that sees no 422 saw only well-formed requests.
// `fail` lets a test make the forge answer an error for the requests it chooses.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  /** The path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as sent. */
  raw: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  /** What the forge answered. */
  status: number;
  problems: string[];
}

export type ShapeCheck = (r: Omit<Received, 'status' | 'problems'>) => string[];

export class Forge {
  readonly received: Received[] = [];
  /** An error status to answer instead (a 500...), or undefined to answer normally (201 to a POST, else 200). */
  fail: (r: Omit<Received, 'status' | 'problems'>) => number | undefined = () => undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(
    check: ShapeCheck,
    ok: (r: Omit<Received, 'status' | 'problems'>) => unknown,
  ): Promise<Forge> {
    let forge: Forge | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = raw ? JSON.parse(raw) : undefined;
        } catch {
          body = undefined;
        }
        const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body };
        const problems = check(r);
        const failed = forge!.fail(r);
        const status = problems.length ? 422 : (failed ?? (r.method === 'POST' ? 201 : 200));
        forge!.received.push({ ...r, status, problems });
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(status < 300 ? ok(r) : { message: problems.join('; ') || 'failed' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    forge = new Forge(server, `http://127.0.0.1:${port}`);
    return forge;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
