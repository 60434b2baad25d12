// Log contents (a range of lines) and raw log downloads. They read a log row under alias `a`
// for the scope; the lines themselves are read by the log-reading code, chunk by chunk.
import { sql } from '../../../core/db/pool.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, PathArgs, Resource } from '../model.js';
import { LOG_PREFIXES, logPathIds, logRowParts, logScope } from './logs.js';

export const logchunk: Resource = {
  name: 'logchunk',
  plural: 'logchunks',
  key: 'logid',
  from: sql`logs a`,
  fields: [
    field('logid', t.integer, sql`a.id`),
    field('firstline', t.integer, sql`0`),
    field('content', t.string, sql`''`),
  ],
};

const contents = (pattern: string): Endpoint => {
  const pathIds = logPathIds(pattern);
  return {
    pattern,
    resource: logchunk,
    collection: false,
    kind: 'logchunk',
    scope: logScope,
    // By id, the log's row and its chunks alone (services/api/read/logs.ts); through its
    // step, those of the log found, and of its step and build (logRowParts).
    ...(pattern.startsWith('logs/n:logid/')
      ? { parts: (a: PathArgs) => ({ logs: { id: a.logid }, logchunks: { logid: a.logid } }) }
      : {}),
    ...(pathIds ? { pathIds, rowParts: logRowParts(false) } : {}),
  };
};
const raw = (pattern: string, inline = false): Endpoint => ({
  pattern,
  resource: logchunk,
  collection: false,
  kind: 'raw-log',
  scope: logScope,
  ...(inline ? { inline } : {}),
});

// Buildbot registers contents under builders/n: only (not by builder name), and so do we.
const prefixes = ['logs/n:logid', ...LOG_PREFIXES.filter((p) => !p.startsWith('builders/s:'))];

export const logchunkEndpoints: Endpoint[] = [
  // A root link in Buildbot (where it fails); it names no log.
  {
    pattern: 'logchunks',
    resource: logchunk,
    collection: false,
    kind: 'logchunk',
    scope: () => [sql`false`],
    rootLink: 'logchunks',
  },
  ...prefixes.map((p) => contents(`${p}/contents`)),
  ...prefixes.map((p) => raw(`${p}/raw`)),
  // Buildbot 4.3: the same text, to be shown rather than saved, wherever `raw` is.
  ...prefixes.map((p) => raw(`${p}/raw_inline`, true)),
];
