import { workerConfiguredOn } from '../../../core/data/path-scopes.js';
import { sql } from '../../../core/db/pool.js';
import { worker as workerEntity } from '../../../core/entities/worker.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';

export const worker: Resource = entityResource(workerEntity);

// A worker under a master or a builder is one configured there.
const configuredHere = (a: PathArgs) => workerConfiguredOn(a.masterid, a.builderid);

const scoped = (a: PathArgs) =>
  a.masterid !== undefined || a.builderid !== undefined ? [configuredHere(a)] : [];
const byId = (a: PathArgs) => [sql`a.id = ${a.workerid}`, ...scoped(a)];
const byName = (a: PathArgs) => [sql`a.name = ${a.name}`, ...scoped(a)];
const one = (pattern: string, scope: Endpoint['scope']): Endpoint => ({
  pattern,
  resource: worker,
  collection: false,
  kind: 'rows',
  scope,
  actions: ['stop', 'pause', 'unpause', 'kill'],
});
const many = (pattern: string, rootLink?: string): Endpoint => ({
  pattern,
  resource: worker,
  collection: true,
  kind: 'rows',
  scope: scoped,
  ...(rootLink ? { rootLink } : {}),
});

export const workerEndpoints: Endpoint[] = [
  one('workers/n:workerid', byId),
  one('workers/i:name', byName),
  one('masters/n:masterid/workers/n:workerid', byId),
  one('masters/n:masterid/workers/i:name', byName),
  one('masters/n:masterid/builders/n:builderid/workers/n:workerid', byId),
  one('masters/n:masterid/builders/n:builderid/workers/i:name', byName),
  one('builders/n:builderid/workers/n:workerid', byId),
  one('builders/n:builderid/workers/i:name', byName),
  many('workers', 'workers'),
  many('masters/n:masterid/workers'),
  many('masters/n:masterid/builders/n:builderid/workers'),
  many('builders/n:builderid/workers'),
];
