// Control requests for the differential run that change nothing, whichever server answers
// them first: malformed JSON-RPC, unknown methods, actions on resources that do not exist or
// cannot take them, other HTTP methods, and force forms that fail validation. Both servers
// share one database, so a request that wrote would change what the other one sees.
import type { Endpoint } from '../../../services/api/registry/model.js';
import { type Bindings, bind, leafOf } from './bindings.js';

export interface Post {
  method: string;
  path: string;
  endpoint: string;
  headers: Record<string, string>;
  body?: string;
}

const JSON_HEADERS = { Accept: 'application/json', 'Content-Type': 'application/json' };

const rpc = (method: unknown, params: unknown = {}, id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', method, id, params });

/** Envelope errors: each is refused before any action runs. */
const ENVELOPES: [string, Record<string, string>, string | undefined][] = [
  ['parse error', JSON_HEADERS, '{"jsonrpc": "2.0", "method": '],
  ['empty body', JSON_HEADERS, ''],
  ['array (batch)', JSON_HEADERS, `[${rpc('nosuch')}]`],
  ['a string', JSON_HEADERS, '"stop"'],
  ['a number', JSON_HEADERS, '1'],
  ['null', JSON_HEADERS, 'null'],
  ['positional', JSON_HEADERS, rpc('nosuch', ['x'])],
  ['params null', JSON_HEADERS, rpc('nosuch', null)],
  ['params string', JSON_HEADERS, rpc('nosuch', 'x')],
  ['jsonrpc 1.0', JSON_HEADERS, JSON.stringify({ jsonrpc: '1.0', method: 'nosuch', id: 1, params: {} })],
  ['no jsonrpc', JSON_HEADERS, JSON.stringify({ method: 'nosuch', id: 1, params: {} })],
  ['jsonrpc number', JSON_HEADERS, JSON.stringify({ jsonrpc: 2, method: 'nosuch', id: 1, params: {} })],
  ['no id', JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', method: 'nosuch', params: {} })],
  ['id list', JSON_HEADERS, rpc('nosuch', {}, [1])],
  ['id object', JSON_HEADERS, rpc('nosuch', {}, { a: 1 })],
  ['id true', JSON_HEADERS, rpc('nosuch', {}, true)],
  ['id null', JSON_HEADERS, rpc('nosuch', {}, null)],
  ['id string', JSON_HEADERS, rpc('nosuch', {}, 'abc')],
  ['id float', JSON_HEADERS, rpc('nosuch', {}, 1.5)],
  ['no method', JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: 1, params: {} })],
  ['method number', JSON_HEADERS, rpc(5)],
  ['method null', JSON_HEADERS, rpc(null)],
  ['no params', JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', method: 'nosuch', id: 1 })],
  ['extra key', JSON_HEADERS, JSON.stringify({ jsonrpc: '2.0', method: 'nosuch', id: 1, params: {}, x: 1 })],
  ['text/plain', { Accept: 'application/json', 'Content-Type': 'text/plain' }, rpc('nosuch')],
  ['form', { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' }, 'a=b'],
  ['no content type', { Accept: 'application/json' }, rpc('nosuch')],
  [
    'charset',
    { Accept: 'application/json', 'Content-Type': 'application/json; charset=utf-8' },
    rpc('nosuch'),
  ],
  ['plain accept', { 'Content-Type': 'application/json' }, rpc('nosuch')],
  ['unicode method', JSON_HEADERS, rpc('stöp')],
];

export function generatePosts(endpoints: readonly Endpoint[], bindings: Bindings): Post[] {
  const out: Post[] = [];
  const add = (e: string, path: string, headers: Record<string, string>, body?: string, method = 'POST') =>
    out.push({ method, path, endpoint: e, headers, body });
  for (const e of endpoints) {
    if (e.noGet) continue;
    const leaf = leafOf(e.pattern);
    const tuples = e.pattern.includes(':')
      ? [...(bindings.byLeaf.get(leaf) ?? []).slice(0, 1), ...(bindings.byLeaf.get('missing') ?? [])]
      : [{}];
    for (const [i, t] of tuples.entries()) {
      const path = bind(e.pattern, t);
      if (path === null) continue;
      add(e.pattern, path, JSON_HEADERS, rpc('nosuch'));
      if (i === 0 && e.actions) {
        for (const [, headers, body] of ENVELOPES) add(e.pattern, path, headers, body);
      }
      if (i > 0) {
        // A resource that does not exist: every action is a 404.
        for (const a of e.actions ?? ['stop']) add(e.pattern, path, JSON_HEADERS, rpc(a));
      }
    }
  }
  for (const m of ['PUT', 'PATCH', 'DELETE']) {
    add('builds', 'builds/1', JSON_HEADERS, rpc('stop'), m);
    add('builds', 'builds', JSON_HEADERS, undefined, m);
  }
  add('', 'nosuchpath', JSON_HEADERS, rpc('stop'));
  add('', '', JSON_HEADERS, rpc('stop'));
  // Actions a resource does not take.
  const br = bindings.byLeaf.get('buildrequests')?.[0];
  if (br) {
    for (const a of ['stop', 'rebuild', 'pause', 'force'])
      add('buildrequests', `buildrequests/${br.buildrequestid}`, JSON_HEADERS, rpc(a));
  }
  const b = bindings.byLeaf.get('builds')?.[0];
  if (b)
    for (const a of ['cancel', 'pause', 'force', 'set_priority'])
      add('builds', `builds/${b.buildid}`, JSON_HEADERS, rpc(a));
  const w = bindings.byLeaf.get('workers')?.[0];
  if (w)
    for (const a of ['cancel', 'rebuild', 'force'])
      add('workers', `workers/${w.workerid}`, JSON_HEADERS, rpc(a));
  // Force forms that fail validation (nothing is added).
  const user = 'Conformance <conformance@example.invalid>';
  const forces: [string, Record<string, unknown>][] = [
    ['force-flaky', { builderid: 5, mode: 'nosuchmode', username: user }],
    ['force-flaky', { builderid: 5, attempt: 'abc', username: user }],
    ['force-flaky', { builderid: 5, attempt: '1.5', username: user }],
    ['force-flaky', { builderid: 5, username: 'no email here' }],
    ['force-flaky', { builderid: 5, mode: 'nosuchmode', attempt: 'x', username: 'bad' }],
    ['force-runtests', { builderid: 4, fail: 'nosuch', username: user }],
    ['force-runtests', { builderid: 4, verbose: 'maybe', username: user, fail: 'nosuch' }],
    ['force-runtests', { builderNames: ['nosuch'], username: user }],
    ['force-runtests', { builderNames: 'runtests', username: user, fail: 'nosuch' }],
    ['force-runtests', { builderid: 999, username: user }],
    ['force-runtests', { builderid: 'x', username: user }],
  ];
  for (const [name, params] of forces)
    add('forceschedulers/i:schedulername', `forceschedulers/${name}`, JSON_HEADERS, rpc('force', params, 7));
  // set_priority on a complete request, and with bad values.
  const done = bindings.byLeaf.get('buildrequests')?.[0];
  if (done) {
    for (const p of [{}, { priority: 'x' }, { priority: 1.5 }, { priority: 5 }]) {
      add('buildrequests', `buildrequests/${done.buildrequestid}`, JSON_HEADERS, rpc('set_priority', p));
    }
  }
  return out;
}
