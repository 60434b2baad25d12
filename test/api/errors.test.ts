// Every way a request can be refused: each 400 of the query parser and compiler (Buildbot's
// own message where Buildbot has one, a message that says what is wrong where we answer
// sanely), the 404s, the JSON-RPC errors with their codes and statuses, and the methods
// that are not allowed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { type Answer, ApiUnderTest, JSON_ACCEPT } from './lib/harness.js';

let api: ApiUnderTest;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
});
afterAll(async () => {
  await api?.close();
});

/** A GET error: 400, text/plain, `{"error": "<message>"}` written as Python's json.dumps. */
function expectBadQuery(a: Answer, message: string | RegExp): void {
  expect({ status: a.status, type: a.headers['content-type'] }).toEqual({
    status: 400,
    type: 'text/plain; charset=utf-8',
  });
  expect(a.text).toMatch(/^\{"error": ".*"\}$/);
  const got = a.json().error as string;
  if (typeof message === 'string') expect(got).toBe(message);
  else expect(got).toMatch(message);
}

function expectNotFound(a: Answer): void {
  expect({ status: a.status, type: a.headers['content-type'], body: a.text }).toEqual({
    status: 404,
    type: 'text/plain; charset=utf-8',
    body: 'not found',
  });
}

describe('400: query parameters (Buildbot messages)', () => {
  const cases: [string, string][] = [
    ['/builds?nosuchfield=1', "unrecognized query parameter 'nosuchfield'"],
    ['/builds/2?foo=1', "unrecognized query parameter 'foo'"],
    ['/builds?foo__eq=1', "unrecognized query parameter 'foo__eq'"],
    ['/builds?__eq=1', "unrecognized query parameter '__eq'"],
    ['/builds?number=abc', 'invalid filter value for number'],
    ['/builds?number=1.5', 'invalid filter value for number'],
    ['/builds?number=', 'invalid filter value for number'],
    ['/builds?number=1&number=x', 'invalid filter value for number'],
    ['/builds?number__lt=abc', 'invalid filter value for number__lt'],
    ['/builds?started_at__gt=yesterday', 'invalid filter value for started_at__gt'],
    ['/builds?complete=maybe', 'invalid filter value for complete'],
    ['/builds?complete=', 'invalid filter value for complete'],
    // An identifier field (a builder's name was one until Buildbot 4.3; a project's is).
    ['/projects?name=has%20space', 'invalid filter value for name'],
    ['/projects?name=1abc', 'invalid filter value for name'],
    [`/projects?name=${'x'.repeat(71)}`, 'invalid filter value for name'],
    ['/builders?masterids__contains=one', 'invalid filter value for masterids__contains'],
    // Object fields cannot be compared with a value.
    ['/changes?properties=x', 'invalid filter value for properties'],
    ['/schedulers?master=1', 'invalid filter value for master'],
    ['/workers?workerinfo=x', 'invalid filter value for workerinfo'],
    ['/workers?configured_on__contains=1', 'invalid filter value for configured_on__contains'],
    ['/buildsets?sourcestamps=1', 'invalid filter value for sourcestamps'],
    ['/forceschedulers?all_fields=x', 'invalid filter value for all_fields'],
    ['/builds?field=nosuch', "no such field 'nosuch'"],
    ['/builds?field=buildid&field=nosuch', "no such field 'nosuch'"],
    ['/builds?field=', "no such field ''"],
    ['/builders?order=-nosuch', "no such field 'nosuch'"],
    ['/builders?order=', "no such field ''"],
    ['/builds/2?order=nosuch', "no such field 'nosuch'"],
    ['/builds?field=buildid&order=-number', 'cannot order on un-selected fields'],
    ['/builds?field=buildid&number=1', 'cannot filter on un-selected fields'],
    ['/builds?field=buildid&number__gt=1', 'cannot filter on un-selected fields'],
    ['/builds?offset=abc', 'invalid offset'],
    ['/builds?offset=', 'invalid offset'],
    ['/builders?limit=x1', 'invalid limit'],
    ['/builders?limit=1e3', 'invalid limit'],
    ['/builders?limit=2.5', 'invalid limit'],
    ['/builds/2?number=1', 'this is not a collection'],
    ['/builds/2?number__lt=3', 'this is not a collection'],
    ['/builders/4?name=runtests', 'this is not a collection'],
    ['/logs/5/contents?logid=5', 'this is not a collection'],
  ];
  it.each(cases)('%s', async (path, message) => expectBadQuery(await api.get(path), message));

  it('a single entity accepts limit, offset, order and field', async () => {
    const a = await api.get('/builds/2?limit=1&offset=0&order=-buildid&field=buildid');
    expect(a.json()).toEqual({ builds: [{ buildid: 2 }], meta: {} });
  });
});

describe('400: where Buildbot fails or ignores, a message that says what is wrong', () => {
  const cases: [string, RegExp][] = [
    ['/builds?limit=-1', /limit.*negative/],
    ['/changes?limit=-3', /limit.*negative/],
    ['/builds?offset=-1', /offset.*negative/],
    ['/builds?limit=100000000000000000000', /limit.*large/],
    ['/builds?limit=9223372036854775808', /limit.*large/],
    ['/builds?offset=9223372036854775808', /offset.*large/],
    ['/builders?name__like=run', /operator 'like'/],
    ['/builds?number__foo=1', /operator 'foo'/],
    ['/builds?number__=1', /operator ''/],
    ['/builds?number__lt=1&number__lt=2', /'lt' takes one value/],
    ['/builds?started_at__ge=1&started_at__ge=2', /'ge' takes one value/],
    ['/builders?name__gt=a&name__gt=b', /'gt' takes one value/],
    ['/builds?number__contains=1', /'contains'.*'number' is integer/],
    ['/builds?complete__contains=1', /'contains'.*'complete' is boolean/],
    ['/builds?started_at__contains=1', /'contains'.*'started_at' is datetime/],
    ['/builders?tags__lt=x', /'lt' cannot compare the list field 'tags'/],
    ['/builders?tags__ge=x', /'ge' cannot compare the list field 'tags'/],
    ['/changes?files__gt=a', /'gt' cannot compare the list field 'files'/],
    ['/schedulers?order=master', /cannot order on field 'master'/],
    ['/builds?order=-properties', /cannot order on field 'properties'/],
    ['/workers?order=workerinfo', /cannot order on field 'workerinfo'/],
    ['/workers?order=configured_on', /cannot order on field 'configured_on'/],
    ['/buildsets?order=sourcestamps', /cannot order on field 'sourcestamps'/],
    ['/changes?order=sourcestamp', /cannot order on field 'sourcestamp'/],
  ];
  it.each(cases)('%s', async (path, message) => expectBadQuery(await api.get(path), message));

  it('the largest 64-bit limit and offset are accepted', async () => {
    const a = await api.get('/builds?limit=9223372036854775807&offset=9223372036854775807');
    expect(a.status).toBe(200);
    expect(a.json()).toEqual({ builds: [], meta: { total: 102 } });
  });
});

describe('404 not found', () => {
  const paths = [
    '/',
    '/builds/',
    '/builds/2/',
    '/builders//builds',
    '//builds',
    '/nosuch',
    '/Builds',
    '/builds/abc',
    '/builds/1_0',
    '/builds/+1',
    '/builds/-1',
    '/builds/%201',
    '/builds/2147483648',
    '/builds/99999999999999999999',
    '/steps/21',
    '/steps/999999',
    '/application.spec/x',
    '/logchunks',
    '/builds/2/nosuch',
    '/builds/2/steps/report/logs/summary/contents/x',
    // A percent-encoded slash is part of one segment: it names no builder.
    '/builders/run%2Ftests',
    '/builders/4%2Fbuilds',
    '/nosuch?limit=x',
    '/logs/5/contents?limit=0',
    '/logs/5/contents?offset=100000',
  ];
  it.each(paths)('GET %s', async (path) => expectNotFound(await api.get(path)));
  it('HEAD of a missing resource', async () => {
    const a = await api.request('HEAD', '/builds/999999', { headers: JSON_ACCEPT });
    expect(a.status).toBe(404);
  });
  it('a percent-encoded segment is decoded once', async () => {
    expect((await api.get('/builds/%32')).json().builds[0].buildid).toBe(2);
    expect((await api.get('/builders/%72untests')).json().builders[0].name).toBe('runtests');
  });
});

describe('methods', () => {
  it.each(['DELETE', 'PUT', 'PATCH'])('%s is 400 invalid HTTP method', async (method) => {
    const a = await api.request(method, '/builds/2', { headers: JSON_ACCEPT });
    expectBadQuery(a, 'invalid HTTP method');
  });
  it('a missing path is still 400 for another method', async () => {
    expectBadQuery(await api.request('DELETE', '/nosuch'), 'invalid HTTP method');
  });
});

describe('JSON-RPC errors', () => {
  const call = (method: string, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    method,
    id: 7,
    params: {},
    ...extra,
  });

  /** A JSON-RPC error as Buildbot writes it: default separators, keys in insertion order. */
  function expectRpcError(a: Answer, status: number, code: number, message: unknown, id?: unknown) {
    expect({ status: a.status, type: a.mediaType }).toEqual({ status, type: 'application/json' });
    const body = a.json();
    expect(Object.keys(body)).toEqual(id === undefined ? ['jsonrpc', 'error'] : ['jsonrpc', 'id', 'error']);
    expect(body.jsonrpc).toBe('2.0');
    if (id !== undefined) expect(body.id).toEqual(id);
    expect(body.error.code).toBe(code);
    if (message instanceof RegExp) expect(body.error.message).toMatch(message);
    else expect(body.error.message).toEqual(message);
    expect(a.text).toMatch(/^\{"jsonrpc": "2\.0", /);
  }

  it('-32700: a body that is not JSON', async () => {
    expectRpcError(
      await api.rpc('/builds/2', '{"jsonrpc": "2.0", "method": '),
      400,
      -32700,
      /^JSON parse error: /,
    );
    expectRpcError(await api.rpc('/builds/2', ''), 400, -32700, /^JSON parse error: /);
  });

  const invalid: [string, unknown, string][] = [
    ['a batch', [call('stop')], 'JSONRPC batch requests are not supported'],
    ['an empty batch', [], 'JSONRPC batch requests are not supported'],
    ['a number', 3, 'JSONRPC root object must be an object'],
    ['a string', 'x', 'JSONRPC root object must be an object'],
    ['null', null, 'JSONRPC root object must be an object'],
    ['no jsonrpc', { method: 'stop', id: 1, params: {} }, "missing key 'jsonrpc'"],
    ['jsonrpc a number', call('stop', { jsonrpc: 2 }), "'jsonrpc' must be a string"],
    ['no method', { jsonrpc: '2.0', id: 1, params: {} }, "missing key 'method'"],
    ['method a number', call('stop', { method: 1 }), "'method' must be a string"],
    ['no id', { jsonrpc: '2.0', method: 'stop', params: {} }, "missing key 'id'"],
    ['id a list', call('stop', { id: [1] }), "'id' must be a string, number, or null"],
    ['id an object', call('stop', { id: {} }), "'id' must be a string, number, or null"],
    ['id a fraction', call('stop', { id: 1.5 }), "'id' must be a string, number, or null"],
    ['no params', { jsonrpc: '2.0', method: 'stop', id: 'p' }, "missing key 'params'"],
    ['positional params', call('stop', { params: ['x'] }), "'params' must be an object"],
    ['params null', call('stop', { params: null }), "'params' must be an object"],
    ['JSON-RPC 1.0', call('stop', { jsonrpc: '1.0' }), 'only JSONRPC 2.0 is supported'],
  ];
  it.each(invalid)('-32600: %s', async (_what, body, message) => {
    expectRpcError(await api.rpc('/builds/2', JSON.stringify(body)), 400, -32600, message);
  });

  it('-32600: a content type other than application/json', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/jsonx',
      'multipart/form-data',
    ]) {
      const a = await api.request('POST', '/builds/2', {
        headers: { 'content-type': type },
        payload: JSON.stringify(call('stop')),
      });
      expectRpcError(a, 400, -32600, 'Invalid content-type (use application/json)');
    }
  });

  it('no Content-Type at all: 415 with an error that says so (Buildbot: a 500)', async () => {
    const a = await api.request('POST', '/builds/2', { payload: Buffer.from(JSON.stringify(call('stop'))) });
    expect({ status: a.status, type: a.headers['content-type'] }).toEqual({
      status: 415,
      type: 'text/plain; charset=utf-8',
    });
    expect(a.json().error).toMatch(/Content-Type/);
  });

  it('application/json with parameters is accepted', async () => {
    const a = await api.rpc('/builds/2', call('stop'), { 'content-type': 'application/json; charset=utf-8' });
    expect(a.status).toBe(200);
    expect(a.json()).toEqual({ id: 7, jsonrpc: '2.0', result: null });
  });

  it('501 -32601: an action the resource does not have, with the id', async () => {
    expectRpcError(
      await api.rpc('/builds/2', call('nosuch', { id: 11 })),
      501,
      -32601,
      'action: nosuch is not supported',
      11,
    );
    expectRpcError(
      await api.rpc('/builds', call('stop', { id: 'c' })),
      501,
      -32601,
      'action: stop is not supported',
      'c',
    );
    expectRpcError(
      await api.rpc('/workers/2', call('nosuch', { id: null })),
      501,
      -32601,
      'action: nosuch is not supported',
      null,
    );
    expectRpcError(
      await api.rpc('/masters/1', call('stop')),
      501,
      -32601,
      'action: stop is not supported',
      7,
    );
  });

  it('-32602: form validation of a force, with a message per field', async () => {
    const a = await api.rpc(
      '/forceschedulers/force-flaky',
      call('force', { params: { builderid: 5, reason: 'bad', mode: 'nosuchmode' } }),
    );
    expectRpcError(
      a,
      400,
      -32602,
      {
        mode: "'nosuchmode' does not belong to list of available choices '['fail', 'pass', 'warn', 'exception']'",
      },
      7,
    );
  });

  it('a build request refuses every action but cancel: 400', async () => {
    expectBadQuery(await api.rpc('/buildrequests/2', call('stop')), /cancel/);
  });

  it.each([
    ['/builds/999999', 'stop'],
    ['/builds/999999', 'rebuild'],
    ['/builders/4/builds/999999', 'stop'],
    ['/builders/nosuch/builds/1', 'stop'],
    ['/buildrequests/999999', 'cancel'],
    ['/forceschedulers/nosuch', 'force'],
    ['/workers/999999', 'pause'],
    ['/workers/nosuchworker', 'stop'],
    ['/nosuchpath', 'stop'],
    ['/builds/2/', 'stop'],
  ])('404 not found: POST %s %s', async (path, method) => {
    expectNotFound(await api.rpc(path, call(method)));
  });

  it('413: a body beyond the limit, without reading it all', async () => {
    const big = JSON.stringify(call('stop', { params: { reason: 'x'.repeat(2 * 1024 * 1024) } }));
    const a = await api.rpc('/builds/2', big);
    expect(a.status).toBe(413);
    expect(a.mediaType).toBe('text/plain');
    expect(a.json()).toEqual({ error: expect.any(String) });
  });

  it('no refused call changed the database', async () => {
    const [row] = await api.db.pool.query(
      sql`SELECT (SELECT count(*) FROM buildsets)::int AS buildsets, (SELECT count(*) FROM buildrequests)::int AS brs`,
    );
    expect(row).toEqual({ buildsets: 79, brs: 104 });
  });
});
