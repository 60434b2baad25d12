// Requests whose headers matter: HEAD, the Accept header that picks JSON or indented text,
// CORS (an Origin, allowed or not, and the OPTIONS preflight) and methods the API has not.
// `{self}` in a header stands for the origin of the server asked, since each allows its own.
import type { Post } from './posts.js';

const PATHS = [
  '',
  'builders?order=builderid',
  'builds/2',
  'builds/2/steps?order=number',
  'logs/5/contents',
  'logs/5/raw',
  'logs/21/raw',
  'changes/1',
  'application.spec?order=path&limit=3',
  'workers/2',
  'nosuch',
  'builds/999999',
  'builds?limit=-1',
];

const VARIANTS: [string, Record<string, string>][] = [
  ['HEAD', { Accept: 'application/json' }],
  ['HEAD', {}],
  ['GET', { Accept: '*/*' }],
  ['GET', { Accept: 'text/html' }],
  ['GET', { Accept: 'text/plain' }],
  ['GET', { Accept: 'application/json, text/plain;q=0.5' }],
  ['GET', { Accept: 'text/plain, application/json' }],
  ['GET', { Accept: 'APPLICATION/JSON' }],
  ['GET', { Accept: 'application/json', Origin: '{self}' }],
  ['GET', { Accept: 'application/json', Origin: 'http://evil.example' }],
  ['OPTIONS', { Origin: '{self}', 'Access-Control-Request-Method': 'GET' }],
  ['OPTIONS', { Origin: '{self}', 'Access-Control-Request-Method': 'PUT' }],
  ['OPTIONS', { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'GET' }],
  ['OPTIONS', {}],
  ['PUT', { Accept: 'application/json' }],
];

export const HEADER_REQUESTS: Post[] = PATHS.flatMap((path) =>
  VARIANTS.map(([method, headers]) => ({ method, path, endpoint: 'headers', headers })),
);
