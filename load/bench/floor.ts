// The floor under target 1 on this machine: what an HTTP request costs when the server does
// nothing but ask PostgreSQL one trivial prepared question (Fastify + pg, 1 KB answer), and
// when it does not even do that. No Flotilla code runs; it bounds what any API that checks
// the database on every request can reach here, next to pgbench's figures.
//
//   node --import tsx load/bench/floor.ts "$(load/bench/cluster.sh url bench)" [--duration 8] [--engine wrk|autocannon] [--bytes 1000]
//
// The server runs in a child process (as the API does in the benchmark), stopped by its pid.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import pg from 'pg';
import { hammer } from '../measure.js';
import { hammerWrk } from '../wrk.js';

const { values: args, positionals } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    port: { type: 'string', default: '18998' },
    serve: { type: 'boolean', default: false },
    engine: { type: 'string', default: 'wrk' },
    // The answer's size: 1,000 bytes as in every figure before 2026-11-25; a page of 50
    // builds is 13 KB, and what its size alone costs shows against a floor of that size.
    bytes: { type: 'string', default: '1000' },
  },
  allowPositionals: true,
});
const dbUrl = positionals[0];
if (!dbUrl) throw new Error('usage: floor.ts DATABASE_URL [--duration S] [--port P]');

if (args.serve) {
  const pool = new pg.Pool({ connectionString: dbUrl, max: 10 });
  const app = Fastify({ logger: false });
  const body = 'x'.repeat(Number(args.bytes));
  app.get('/static', async (_req, reply) => reply.type('application/json').send(body));
  app.get('/select1', async (_req, reply) => {
    await pool.query({ name: 'floor_one', text: 'SELECT 1 AS v', values: [] });
    return reply.type('application/json').send(body);
  });
  process.on('SIGTERM', () => void app.close().then(() => pool.end()));
  await app.listen({ port: Number(args.port), host: '127.0.0.1' });
} else {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      dbUrl,
      '--serve',
      '--port',
      args.port!,
      '--bytes',
      args.bytes!,
    ],
    { stdio: 'inherit' },
  );
  try {
    const base = `http://127.0.0.1:${args.port}`;
    for (let i = 0; ; i++) {
      if (
        await fetch(`${base}/static`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (i > 100) throw new Error('the floor server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const path of ['/static', '/select1']) {
      for (const connections of [1, 8]) {
        const opts = { base, paths: [path], connections, timeoutSeconds: 10, headers: {} };
        const engine = args.engine === 'autocannon' ? hammer : hammerWrk;
        await engine({ ...opts, durationSeconds: 2 });
        const run = await engine({ ...opts, durationSeconds: Number(args.duration) });
        const p50 = run.p50 ?? run.latencies[Math.floor(run.latencies.length / 2)] ?? 0;
        console.log(
          `${path} c=${connections} (${args.engine}): ${run.rps.toFixed(1)} req/s, p50 ${p50.toFixed(2)} ms`,
        );
      }
    }
  } finally {
    process.kill(child.pid!, 'SIGTERM');
  }
}
