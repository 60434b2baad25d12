// What a connected worker keeps alive on the master (Flotilla's protocol): not its upgrade
// request, nor its hello's timer once the hello came. A handler naming `req` kept the whole
// request, headers and stream state, for the connection's life: 1.4 KiB of a worker's 6.5
// in a master's heap snapshot (load/results/fleet.md, 2026-11-29 08:23-08:38).
// Counted as the heap holds them after a full collection (v8.queryObjects collects first).
import { IncomingMessage } from 'node:http';
import { queryObjects } from 'node:v8';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { startWorkerServer } from '../../../services/master/workers/flotilla/server.js';
import { hello } from './lib.js';

const N = 20;
const names = Array.from({ length: N }, (_, i) => `w${i}`);
type Ctor = abstract new (...args: never[]) => unknown;
const Timeout = setTimeout(() => {}, 0).constructor as Ctor;
const live = (ctor: Ctor) => queryObjects(ctor, { format: 'count' }) as number;

describe('a connected worker on the master', () => {
  it('keeps neither its upgrade request nor its cleared hello timer', async () => {
    const server = await startWorkerServer({
      host: '127.0.0.1',
      port: 0,
      config: parseMasterConfig(
        `workers: [${names.map((n) => `{ name: ${n}, password: p${n} }`).join(', ')}]`,
      ),
      masterName: 'memory-test',
      log: createLogger('test', 'silent'),
    });
    const sockets: WebSocket[] = [];
    try {
      const [requests0, timers0] = [live(IncomingMessage), live(Timeout)];
      for (const name of names) {
        const ws = new WebSocket(`ws://127.0.0.1:${server.port}/worker`);
        sockets.push(ws);
        const welcome = new Promise<string>((resolve, reject) => {
          ws.once('message', (data) => resolve(String(data)));
          ws.once('error', reject);
        });
        await new Promise((resolve, reject) => {
          ws.once('open', resolve);
          ws.once('error', reject);
        });
        ws.send(hello(name, `p${name}`));
        expect(JSON.parse(await welcome)).toMatchObject({ type: 'welcome' });
      }
      expect(server.connected()).toHaveLength(N);
      // Each of the N held its request and two timers before; a few may be anyone's.
      expect(live(IncomingMessage) - requests0).toBeLessThan(N / 4);
      expect(live(Timeout) - timers0).toBeLessThan(N + N / 4);
    } finally {
      for (const ws of sockets) ws.close();
      await server.close();
    }
  });
});
