// cred login against a real buildbot-worker 3.7 made by plain `create-worker --protocol=pb`:
// a test-only PB server built from Flotilla's layers (banana, jelly, broker, login) on a TCP
// port; the worker logs in with the MD5 challenge and response, and the server then calls
// `print` and `getWorkerInfo` on the worker's mind and gets its answers. A wrong password and
// an unknown name are refused with Buildbot's UnauthorizedLogin, and logged.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, LocalObject, type RemoteReference } from '../../../../services/master/workers/pb/broker.js';
import type { JellyKey, JellyValue } from '../../../../services/master/workers/pb/jelly.js';
import { pbLoginRoot, pbResponse } from '../../../../services/master/workers/pb/login.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../../helpers/buildbot-worker.js';
import { freePort, type Running } from '../../../helpers/processes.js';
import { waitFor } from '../../../helpers/wait.js';

const PASSWORDS: Record<string, string> = { w1: 'pw1' };

describe('PB login with a real buildbot-worker', () => {
  let server: Server;
  let port: number;
  let root: string;
  const minds = new Map<string, RemoteReference>();
  const refused: string[] = [];
  const running: Running[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pb-login-'));
    port = await freePort();
    server = createServer((socket) => {
      const broker = new Broker({
        isClient: false,
        send: (b) => socket.write(b),
        close: () => socket.destroy(),
      });
      broker.setNamed(
        'root',
        pbLoginRoot({
          password: (name) => PASSWORDS[name],
          loggedIn: (name, mind) => {
            if (mind) minds.set(name, mind);
            return new LocalObject('Perspective', { keepalive: () => null });
          },
          refused: (name, why) => refused.push(`${name}: ${why}`),
        }),
      );
      socket.on('data', (b: Buffer) => broker.receive(b));
      socket.on('close', () => broker.connectionLost());
      socket.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  });

  afterAll(async () => {
    for (const w of running) await w.stop();
    await new Promise((r) => server.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  function worker(dir: string, name: string, password: string): Running {
    createBuildbotWorker({
      dir: join(root, dir),
      port,
      name,
      password,
      protocol: 'pb',
      admin: 'pb test',
      host: 'pb host',
    });
    const w = startBuildbotWorker(join(root, dir));
    running.push(w);
    return w;
  }

  it('computes the response as Twisted does', () => {
    // md5(md5('pw1') + challenge), the figure from Python's hashlib:
    // python3 -c "import hashlib; print(hashlib.md5(hashlib.md5(b'pw1').digest() + b'A' * 16).hexdigest())"
    const challenge = Buffer.alloc(16, 0x41);
    expect(pbResponse('pw1', challenge).toString('hex')).toBe('ef2f62b3f2bdc20416725fdb7109ada2');
  });

  it('logs a worker in, then calls print and getWorkerInfo on it', async () => {
    worker('good', 'w1', 'pw1');
    await waitFor('the worker to log in', () => minds.has('w1'));
    const mind = minds.get('w1') as RemoteReference;
    expect(await mind.callRemoteKw('print', [], { message: 'hello from a Flotilla test' })).toBeNull();
    const info = (await mind.callRemote('getWorkerInfo')) as Map<JellyKey, JellyValue>;
    expect(info.get('admin')).toBe('pb test');
    expect(info.get('host')).toBe('pb host');
    expect(typeof info.get('version')).toBe('string');
    expect(refused).toEqual([]);
  });

  it('refuses a wrong password and an unknown name, as Buildbot does, and logs each', async () => {
    const bad = worker('bad', 'w1', 'nope');
    const stranger = worker('stranger', 'who', 'pw1');
    await waitFor(
      'both refusals',
      () => refused.includes('w1: wrong password') && refused.includes('who: unknown name'),
    );
    // Each worker took the refusal for Buildbot's: buildbot-worker logs this line only when the
    // failure checks as twisted.cred.error.UnauthorizedLogin (buildbot_worker/pbutil.py).
    const understood = (w: Running, dir: string) => {
      let log = w.output();
      try {
        log += readFileSync(join(root, dir, 'twistd.log'), 'utf8');
      } catch {}
      return log.includes('unauthorized login; check worker name and password');
    };
    await waitFor(
      'the workers to log the refusal',
      () => understood(bad, 'bad') && understood(stranger, 'stranger'),
    );
    expect(minds.has('who')).toBe(false);
  });
});
