// The small HTTP server of every process, on a port of its own (PROBE_PORT): /healthz says
// the process is alive, /readyz whether it can do its work (and why not), /metrics what it
// is doing. An API pod answers its public port with a cheap /healthz and /readyz only.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Check, readiness } from '../health.js';
import { listenAt } from './listen-error.js';
import { http } from './node-http.js';

export interface ProbeServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export interface ProbeOptions {
  host: string;
  port: number;
  checks: readonly Check[];
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** More to say beside the checks (an API pod: where its reads go); never decides readiness. */
  details?: () => Record<string, unknown>;
}

export async function startProbeServer(opts: ProbeOptions): Promise<ProbeServer> {
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      } else if (path === '/readyz') {
        const r = await readiness(opts.checks);
        res
          .writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...r, ...opts.details?.() }));
      } else if (path === '/metrics' && opts.metrics) {
        const m = await opts.metrics();
        res.writeHead(200, { 'content-type': m.contentType }).end(m.body);
      } else {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
      }
    } catch {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('unavailable');
    }
  });
  // A port that cannot be had is said with its setting (every process's PROBE_PORT and HOST).
  const site = {
    what: 'the probe port',
    host: opts.host,
    port: opts.port,
    portSetting: 'PROBE_PORT',
    hostSetting: 'HOST',
  };
  await listenAt(
    site,
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, () => resolve());
      }),
  );
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
