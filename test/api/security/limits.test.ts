// Size and shape limits, over real sockets where Node's HTTP parser decides: a body past the
// limit is 413 (declared or chunked), headers past it 431, a URL past it 414, a JSON-RPC call
// without Content-Type 415 (Buildbot: a 500), a request the parser cannot read 400; each in
// our error shape, text/plain {"error": "..."}, and none reaches a handler.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn } from '../../helpers/api.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { AuthApp } from '../auth/lib.js';

let db: TestDatabase;
let api: AuthApp;
let port: number;
const LIMITS = { body_bytes: 2048, header_bytes: 4096, url_bytes: 1024 };

beforeAll(async () => {
  db = await createDatabase('fixture');
  api = await AuthApp.start({ www: { rate_limit: { enabled: false }, limits: LIMITS } }, { db });
  port = Number(new URL(await listenOn(api.app)).port);
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

interface Raw {
  status: number;
  head: string;
  body: string;
}

/** Sends bytes as they are and reads the answer until the server closes or a timeout. */
function raw(bytes: string | Buffer, timeoutMs = 30_000): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const done = () => {
      clearTimeout(t);
      s.destroy();
      const text = data.toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const head = text.slice(0, cut);
      let body = text.slice(cut + 4);
      const len = /content-length: (\d+)/i.exec(head);
      if (len) body = body.slice(0, Number(len[1]));
      resolve({ status: Number(m[1]), head, body });
    };
    const t = setTimeout(done, timeoutMs);
    s.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
      const text = data.toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(text.slice(0, cut));
      if (cut >= 0 && len && data.length >= cut + 4 + Number(len[1])) done();
    });
    s.on('end', done);
    s.on('error', () => done());
    s.write(bytes);
  });
}

function expectShape(r: Raw, status: number, message: string): void {
  expect(r.status).toBe(status);
  expect(r.head).toMatch(/content-type: text\/plain; charset=utf-8/i);
  expect(JSON.parse(r.body)).toEqual({ error: message });
}

describe('body', () => {
  it('413 for a declared length past the limit', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'stop', id: 1, params: { r: 'x'.repeat(4000) } });
    const r = await raw(
      `POST /api/v2/builds/2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expectShape(r, 413, 'request body too large');
  });
  it('413 for a chunked body that grows past it', async () => {
    const chunk = 'x'.repeat(1000);
    const chunks = Array.from({ length: 5 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const r = await raw(
      `POST /api/v2/builds/2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
    );
    expectShape(r, 413, 'request body too large');
  });
  it('a body within the limit is read', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'stop', id: 1, params: {} });
    const r = await raw(
      `POST /api/v2/builds/2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(r.status).toBe(200);
  });
});

describe('headers', () => {
  it('431 for headers past the limit, from the parser, in our shape', async () => {
    const r = await raw(`GET /api/v2/builders HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(5000)}\r\n\r\n`);
    expectShape(r, 431, 'request header fields too large');
    expect(r.head).toMatch(/connection: close/i);
  });
  it('431 for many small headers adding up', async () => {
    const many = Array.from({ length: 300 }, (_, i) => `X-H${i}: ${'v'.repeat(20)}\r\n`).join('');
    expectShape(
      await raw(`GET /api/v2/builders HTTP/1.1\r\nHost: x\r\n${many}\r\n`),
      431,
      'request header fields too large',
    );
  });
  it('a cookie too big to be a session is ignored (anonymous), not an error', async () => {
    const r = await raw(
      `GET /api/v2/builders HTTP/1.1\r\nHost: x\r\nCookie: TWISTED_SESSION=${'a.'.repeat(1500)}b\r\nConnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(200);
  });
});

describe('URL', () => {
  it('414 for a query string past the limit', async () => {
    const a = await api.get(`/api/v2/builders?name=${'x'.repeat(2000)}`);
    expect(a.status).toBe(414);
    expect(a.json()).toEqual({ error: 'request URI too long' });
  });
  it('a long path within a larger URL limit names nothing: 404', async () => {
    const big = await AuthApp.start(
      { www: { rate_limit: { enabled: false }, limits: { url_bytes: 65536 } } },
      { db },
    );
    try {
      const a = await big.get(`/api/v2/builders/${'x'.repeat(5000)}`);
      expect(a.status).toBe(404);
      expect(a.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(a.text).toBe('not found');
    } finally {
      await big.app.close();
      big.redis.disconnect();
    }
  });
  it('400 for a request line the parser cannot read', async () => {
    for (const line of [
      'GET /api/v2/builders\x00 HTTP/1.1',
      'GET /a b c HTTP/1.1',
      'BREW /api/v2 HTTP/1.1',
      'GET / HTTP/9.9',
    ]) {
      const r = await raw(`${line}\r\nHost: x\r\n\r\n`);
      expectShape(r, 400, 'bad request');
    }
  });
  it('400 for broken framing: two lengths, a bad chunk, a header without a colon', async () => {
    for (const req of [
      'POST /api/v2/builds/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      'POST /api/v2/builds/2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'GET /api/v2/builders HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n',
    ]) {
      expectShape(await raw(req), 400, 'bad request');
    }
  });
});

describe('Content-Type', () => {
  it('415 for a JSON-RPC call without one (Buildbot answers 500)', async () => {
    const a = await api.request('POST', '/api/v2/builds/2', {
      payload: JSON.stringify({ jsonrpc: '2.0', method: 'stop', id: 1, params: {} }),
    });
    expect(a.status).toBe(415);
    expect(a.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(a.json().error).toMatch(/Content-Type: application\/json/);
  });
  it("another type is Buildbot's 400 -32600", async () => {
    const a = await api.request('POST', '/api/v2/builds/2', {
      headers: { 'content-type': 'text/plain' },
      payload: '{}',
    });
    expect(a.status).toBe(400);
    expect(a.json().error).toEqual({ code: -32600, message: 'Invalid content-type (use application/json)' });
  });
});

describe('after all that', () => {
  it('the server still serves', async () => {
    const r = await raw('GET /api/v2/builders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(r.status).toBe(200);
  });
});
