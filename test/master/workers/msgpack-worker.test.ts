// Buildbot's msgpack_experimental_v7 protocol against a real buildbot-worker 3.7: the
// handshake (workerinfo, builder directories), shell commands with their output line by
// line, every file system command, file transfer both ways, interrupt, the refusals on the
// upgrade, malformed frames, and shutdown.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { OutputStream } from '../../../services/core/protocol/messages.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import * as commands from '../../../services/master/workers/msgpack/commands.js';
import type { MsgpackWorkerConnection } from '../../../services/master/workers/msgpack/connection.js';
import { encodeFrame } from '../../../services/master/workers/msgpack/messages.js';
import {
  type MsgpackWorkerServer,
  startMsgpackWorkerServer,
} from '../../../services/master/workers/msgpack/server.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../helpers/buildbot-worker.js';
import type { Running } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const log = createLogger('test', 'silent');
const dir = mkdtempSync(join(tmpdir(), 'flotilla-bbw-'));
const base = join(dir, 'worker');
let server: MsgpackWorkerServer;
let worker: Running;
let conn: MsgpackWorkerConnection;
const connected: string[] = [];
const disconnected: string[] = [];

beforeAll(async () => {
  server = await startMsgpackWorkerServer({
    host: '127.0.0.1',
    port: 0,
    passwords: new Map([['bbw', 'secret']]),
    builderDirs: () => ['alpha', 'beta'],
    log,
    events: { connected: (c) => connected.push(c.name), disconnected: (c) => disconnected.push(c.name) },
  });
  createBuildbotWorker({
    dir: base,
    port: server.port,
    name: 'bbw',
    password: 'secret',
    admin: 'Ada <ada@example.org>\n',
    host: 'a test machine\n',
    deleteLeftoverDirs: true,
  });
  // A directory no builder wants: the handshake removes it (--delete-leftover-dirs).
  mkdirSync(join(base, 'stale-builder'));
  worker = startBuildbotWorker(base);
  await waitFor('the buildbot-worker to attach', async () => server.get('bbw') !== undefined, {
    proc: worker,
  });
  conn = server.get('bbw')!;
});

afterAll(async () => {
  await worker?.stop();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function collect() {
  const parts: [OutputStream, string, string?][] = [];
  const sink = async (s: OutputStream, t: string, l?: string) => {
    parts.push(l === undefined ? [s, t] : [s, t, l]);
  };
  const text = (s: OutputStream, l?: string) =>
    parts
      .filter((p) => p[0] === s && p[2] === l)
      .map((p) => p[1])
      .join('');
  return { parts, sink, text };
}

describe('handshake', () => {
  it('reads the workerinfo and makes the builder directories, removing leftovers', () => {
    expect(connected).toEqual(['bbw']);
    expect(conn.info).toEqual({
      admin: 'Ada <ada@example.org>\n',
      host: 'a test machine\n',
      access_uri: '',
      version: expect.stringMatching(/^3\.7/),
    });
    expect(conn.details.basedir).toBe(base);
    for (const d of ['alpha', 'beta', 'info']) expect(statSync(join(base, d)).isDirectory()).toBe(true);
    expect(existsSync(join(base, 'stale-builder'))).toBe(false);
    expect(existsSync(join(base, 'buildbot.tac'))).toBe(true);
  });
});

describe('shell', () => {
  it('streams stdout and stderr exactly, with the header, and the exit code', async () => {
    const c = collect();
    const cmd = conn.run(
      {
        command: [
          'sh',
          '-c',
          'echo one; echo two >&2; printf "a\\r\\nb\\n"; printf "café ünïcode\\n"; printf tail',
        ],
        workdir: 'alpha/build',
        env: { FLOTILLA_X: 'y' },
      },
      c.sink,
    );
    const end = await cmd;
    expect(end).toMatchObject({ rc: 0, interrupted: false, timedOut: false, signal: null });
    // buildbot-worker turns \r\n into \n and ends an unfinished last line, as Flotilla's LogWriter does.
    expect(c.text('o')).toBe('one\na\nb\ncafé ünïcode\ntail\n');
    expect(c.text('e')).toBe('two\n');
    expect(c.text('h')).toContain(`in dir ${join(base, 'alpha', 'build')}`);
    expect(c.text('h')).toContain('  FLOTILLA_X=y\n');
    // Buildbot 3.7 order: its master writes the rc line when the rc arrives, before the worker's last header.
    expect(c.text('h')).toMatch(/\nprogram finished with exit code 0\nelapsedTime=[0-9.]+\n$/);
  });

  it('keeps every line of a large output, in order', async () => {
    const c = collect();
    const n = 20_000;
    const end = await conn.run({ command: `seq 1 ${n}`, workdir: 'alpha/build' }, c.sink);
    expect(end).toMatchObject({ rc: 0 });
    const lines = c.text('o').split('\n');
    expect(lines.length).toBe(n + 1);
    expect(lines[0]).toBe('1');
    expect(lines[n - 1]).toBe(String(n));
  });

  it('keeps a line longer than Buildbot cuts, whole', async () => {
    const c = collect();
    const end = await conn.run(
      { command: 'head -c 10000 /dev/zero | tr "\\0" x; echo', workdir: 'alpha' },
      c.sink,
    );
    expect(end).toMatchObject({ rc: 0 });
    expect(c.text('o')).toBe(`${'x'.repeat(10_000)}\n`);
  });

  it('reports a failing exit code', async () => {
    const c = collect();
    const end = await conn.run({ command: 'echo bad; exit 3', workdir: 'alpha/build' }, c.sink);
    expect(end).toMatchObject({ rc: 3 });
    expect(c.text('o')).toBe('bad\n');
  });

  it('follows logfiles as extra logs', async () => {
    const c = collect();
    const end = await conn.run(
      {
        command: 'echo first > extra.log; sleep 0.5; echo second >> extra.log; echo done',
        workdir: 'alpha/build',
        logfiles: { extra: { filename: 'extra.log', follow: false } },
      },
      c.sink,
    );
    expect(end).toMatchObject({ rc: 0 });
    expect(c.text('o', 'extra')).toBe('first\nsecond\n');
    expect(c.text('o')).toBe('done\n');
  });

  it('times out a silent command', async () => {
    const c = collect();
    const end = await conn.run({ command: 'sleep 30', workdir: 'alpha', timeout: 1 }, c.sink);
    expect(end).toMatchObject({ timedOut: true });
    expect(end).not.toMatchObject({ rc: 0 });
  });

  it('interrupts a running command, and the command stops', async () => {
    const c = collect();
    const marker = join(base, 'alpha', 'still-running');
    const stop = new AbortController();
    const cmd = conn.run(
      { command: `echo started; sleep 60; touch ${marker}`, workdir: 'alpha' },
      c.sink,
      stop.signal,
    );
    await waitFor('the command to start', async () => c.text('o').includes('started'));
    stop.abort('stopped by the test');
    const end = await cmd;
    expect(end).toMatchObject({ interrupted: true });
    expect(end).not.toMatchObject({ rc: 0 });
    expect(c.text('h')).toContain('command interrupted');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('file system commands', () => {
  it('mkdir, stat, glob, listdir, cpdir, rmfile and rmdir', async () => {
    const p = (...x: string[]) => conn.path('beta', ...x);
    expect((await commands.mkdir(conn, [p('d1', 'deep'), p('d2')])).rc).toBe(0);
    writeFileSync(join(base, 'beta', 'd1', 'f.txt'), 'hello');
    const st = await commands.stat(conn, p('d1', 'f.txt'));
    expect(st?.[6]).toBe(5);
    expect(await commands.stat(conn, p('nope'))).toBeNull();
    expect(await commands.glob(conn, p('d1', '*.txt'))).toEqual([p('d1', 'f.txt')]);
    expect((await commands.listdir(conn, p()))?.sort()).toEqual(['d1', 'd2']);
    expect(await commands.listdir(conn, p('nope'))).toBeNull();
    expect((await commands.cpdir(conn, p('d1'), p('d3'))).rc).toBe(0);
    expect(readFileSync(join(base, 'beta', 'd3', 'f.txt'), 'utf8')).toBe('hello');
    expect((await commands.rmfile(conn, p('d3', 'f.txt'))).rc).toBe(0);
    expect(existsSync(join(base, 'beta', 'd3', 'f.txt'))).toBe(false);
    expect((await commands.rmdir(conn, [p('d1'), p('d2'), p('d3')])).rc).toBe(0);
    expect(await commands.listdir(conn, p())).toEqual([]);
  });
});

describe('file transfer', () => {
  const big = Buffer.alloc(700_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  it('downloads a file to the worker in blocks, with its mode', async () => {
    let at = 0;
    const r = await commands.download(
      conn,
      conn.path('beta', 'in', 'big.bin'),
      async (n) => {
        const piece = big.subarray(at, at + n);
        at += piece.length;
        return piece;
      },
      { mode: 0o640, blocksize: 64 * 1024 },
    );
    expect(r.rc).toBe(0);
    const file = join(base, 'beta', 'in', 'big.bin');
    expect(sha(readFileSync(file))).toBe(sha(big));
    expect(statSync(file).mode & 0o777).toBe(0o640);
  });

  it('uploads it back in blocks', async () => {
    const parts: Buffer[] = [];
    let closed = false;
    const r = await commands.upload(
      conn,
      conn.path('beta', 'in', 'big.bin'),
      async (d) => void parts.push(Buffer.from(d)),
      {
        blocksize: 64 * 1024,
        close: async () => {
          closed = true;
        },
      },
    );
    expect(r.rc).toBe(0);
    expect(closed).toBe(true);
    expect(parts.length).toBeGreaterThan(1);
    expect(sha(Buffer.concat(parts))).toBe(sha(big));
  });

  it('reports a missing file on upload', async () => {
    const r = await commands.upload(conn, conn.path('beta', 'missing.bin'), async () => {});
    expect(r.rc).toBe(1);
    expect(r.text).toContain('Cannot open file');
  });

  it('uploads a directory as a tar archive', async () => {
    const parts: Buffer[] = [];
    let unpacked = false;
    const r = await commands.uploadDirectory(
      conn,
      conn.path('beta', 'in'),
      async (d) => void parts.push(Buffer.from(d)),
      {
        unpack: async () => {
          unpacked = true;
        },
      },
    );
    expect(r.rc).toBe(0);
    expect(unpacked).toBe(true);
    const tar = Buffer.concat(parts);
    // A ustar archive: the member's name, then the magic at offset 257 of its header.
    expect(tar.includes(Buffer.from('big.bin'))).toBe(true);
    expect(tar.includes(Buffer.from('ustar'))).toBe(true);
  });

  it('a failing sink stops the transfer with an error', async () => {
    const r = await commands.upload(conn, conn.path('beta', 'in', 'big.bin'), async () => {
      throw new Error('disk full');
    });
    expect(r.rc).not.toBe(0);
  });
});

describe('refusals and bad frames', () => {
  async function upgrade(headers: Record<string, string>): Promise<number | 'open'> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/`, { headers });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => {
        ws.close();
        resolve('open');
      });
      ws.on('error', () => {});
    });
  }
  const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

  it('answers the upgrade as Buildbot does', async () => {
    expect(await upgrade({})).toBe(401);
    expect(await upgrade({ Authorization: basic('bbw:wrong') })).toBe(401);
    expect(await upgrade({ Authorization: basic('nobody:secret') })).toBe(401);
    expect(await upgrade({ Authorization: 'Bearer abc' })).toBe(400);
    expect(await upgrade({ Authorization: basic('nocolon') })).toBe(400);
  });

  it('refuses a second connection of a connected worker', async () => {
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/`, {
        headers: { Authorization: basic('bbw:secret') },
      });
      ws.on('close', (c) => resolve(c));
      ws.on('error', () => {});
    });
    expect(code).toBe(4002);
    expect(server.get('bbw')).toBe(conn);
  });

  it('closes a connection that sends a malformed frame (4004)', async () => {
    const other = await startMsgpackWorkerServer({
      host: '127.0.0.1',
      port: 0,
      passwords: new Map([['x', 'y']]),
      builderDirs: () => [],
      log,
    });
    try {
      for (const bad of [Buffer.from([0xc1]), encodeFrame({ op: 'update' }), 'text frame']) {
        const code = await new Promise<number>((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${other.port}/`, {
            headers: { Authorization: basic('x:y') },
          });
          ws.on('message', () => ws.send(bad));
          ws.on('close', (c) => resolve(c));
          ws.on('error', () => {});
        });
        expect(code).toBe(4004);
      }
    } finally {
      await other.close();
    }
  });
});

describe('shutdown', () => {
  it('makes the worker exit, and the master sees it go', async () => {
    await conn.shutdown('stopped by the test');
    expect(await worker.exited).toBe(0);
    await waitFor('the disconnection', async () => disconnected.includes('bbw'));
    expect(server.get('bbw')).toBeUndefined();
    const end = await conn.run({ command: 'true', workdir: 'alpha' }, async () => {});
    expect(end).toMatchObject({ lost: true });
  });
});
