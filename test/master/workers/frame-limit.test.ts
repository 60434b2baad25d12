// Review issue 13, what held: a worker connection's frames are bounded before any login.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { startWorkerServer } from '../../../services/master/workers/flotilla/server.js';

describe('worker frames', () => {
  it('over 16 MiB close the connection (1009), before any login', async () => {
    const server = await startWorkerServer({
      host: '127.0.0.1',
      port: 0,
      config: parseMasterConfig('workers: [{ name: w1, password: pw }]'),
      masterName: 'held-test',
      log: createLogger('test', 'silent'),
    });
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/worker`);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      ws.on('error', () => {});
      ws.send(Buffer.alloc(16 * 1024 * 1024 + 1, 0x20));
      expect(await closed).toBe(1009);
      expect(server.get('w1')).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
